"""What the tests and the benches build the lab's world from, in one place: tiny random models and
tokenizers of every shape the lab reads, loopback stand-ins for API providers and servers (each
built from the real server's code, cited in its module), a real vLLM server's launcher, designs,
stores, synthetic studies and the helpers that kill and resume a run. The benches import it
too, so it lives in the lab (`diarylab.testing`), not in tests/; nothing else in the lab imports
it."""
