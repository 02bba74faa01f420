"""Two served judges read one after another vs at once (issue 22): the engine's judging path
(experiments/engine/judging.py judge_tasks through the run store, lanes from
experiments/engine/lanes.py) with two judges, each behind its own vLLM-faithful stand-in
(testing/fake_judge_server.py), served from a process of its own, that waits an artificial latency
before every answer, as a busy remote server does. Printed: each judge alone, both in one lane
(the old sequential phase), both in their own lanes, and the ratios — at once should take about
the slower judge's time.

    .venv/bin/python bench/concurrent_judges.py [--scores 12] [--latency-ms 100 150]"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from diarylab.experiments.engine.judging import judge_tasks  # noqa: E402
from diarylab.experiments.engine.lanes import run_lanes  # noqa: E402
from diarylab.experiments.engine.store import Store  # noqa: E402
from diarylab.experiments.engine.tasks import Task  # noqa: E402
from diarylab.model_access.served import ServedClient  # noqa: E402
from diarylab.model_access.settings import EndpointSettings  # noqa: E402
from diarylab.rubric.judging.served_exact import ExactSettings  # noqa: E402
from diarylab.rubric.judging.served_judge import ServedJudge  # noqa: E402
from diarylab.rubric.prompts import JudgePrompt, TemplateRef  # noqa: E402
from diarylab.testing.fake_openai import Reply, Routed  # noqa: E402

TEMPLATE = TemplateRef("bench", 1, "0" * 64)


def slow(handler: Routed, latency: float) -> Routed:
    """The stand-in's answer, `latency` seconds late."""

    def answer(path: str, body: dict[str, Any]) -> Reply:
        time.sleep(latency)
        return handler.answer(path, body)

    return Routed(answer)


def tasks(n: int, tag: str) -> list[Task]:
    """n distinct prompts (each its own call key), one group each: batches as large as the
    endpoint's concurrency."""
    out = []
    for i in range(n):
        prompt = JudgePrompt.chat(
            [{"role": "user", "content": f"Rate entry {i} ({tag}), 0 to 100."}],
            prefill="Score: ",
        )
        out.append(Task("entry", f"e{i}", "coherence", "number", prompt, TEMPLATE))
    return out


@dataclass(frozen=True)
class Remote:
    """A stand-in served from a process of its own, so its work does not share the bench's
    GIL with the clients being measured (a real server is another process too)."""

    base_url: str
    conn: Any

    def requests(self) -> int:
        self.conn.send("count")
        return int(self.conn.recv())


def _serve(latency: float, conn: Any) -> None:
    from diarylab.testing.confident_judge import confident_judge
    from diarylab.testing.fake_judge_server import judge_handler
    from diarylab.testing.fake_openai import serve
    from diarylab.testing.judge_tokenizers import mistral_style_tokenizer

    handler = judge_handler(confident_judge(mistral_style_tokenizer()), renderer="mistral")
    with serve(slow(handler, latency)) as fake:
        conn.send(fake.base_url)
        while conn.recv() == "count":
            conn.send(len(fake.requests))


@contextmanager
def servers(latencies: list[float]) -> Iterator[list[Remote]]:
    context = multiprocessing.get_context("fork")
    remotes, processes = [], []
    try:
        for latency in latencies:
            mine, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(latency, theirs), daemon=True)
            process.start()
            processes.append(process)
            remotes.append(Remote(str(mine.recv()), mine))
        yield remotes
    finally:
        for remote in remotes:
            remote.conn.send("stop")
        for process in processes:
            process.join(timeout=10)


def judge_for(url: str, tokenizer: Any, concurrency: int) -> ServedJudge:
    settings = EndpointSettings(base_url=url, concurrency=concurrency)
    return ServedJudge(
        ServedClient("hosted_vllm/fake-judge", settings),
        tokenizer=tokenizer,
        exact=ExactSettings(max_error=0.05),
    )


def timed(judges: dict[str, ServedJudge], scores: int, *, together: bool) -> float:
    """Wall time of the judging phase for `judges`, `scores` readings each, into a fresh store.
    Each judge reads prompts of its own: two judges of one identity asking the same prompts
    would share calls (the second would read the first's back), which is no judging at all."""
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "store.sqlite")
        try:
            jobs = [
                lambda jid=jid, j=j: judge_tasks(
                    store, jid, lambda: j, tasks(scores, jid), 0.0, lambda n: None
                )
                for jid, j in judges.items()
            ]
            lanes = [[job] for job in jobs] if together else [jobs]
            start = time.perf_counter()
            run_lanes(store, lanes)
            wall = time.perf_counter() - start
            assert store.count("judgments") == scores * len(judges)
            assert store.count("calls") == scores * len(judges)  # no call shared
            return wall
        finally:
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scores", type=int, default=12, help="readings per judge")
    parser.add_argument("--latency-ms", type=float, nargs=2, default=[100.0, 150.0])
    parser.add_argument("--concurrency", type=int, default=4, help="each endpoint's")
    args = parser.parse_args()
    from diarylab.testing.judge_tokenizers import mistral_style_tokenizer

    tokenizer = mistral_style_tokenizer()
    latencies = [ms / 1000 for ms in args.latency_ms]
    with servers(latencies) as fakes:
        judges = {
            f"judge-{i}": judge_for(f.base_url, tokenizer, args.concurrency)
            for i, f in enumerate(fakes)
        }
        # Warm-up: each stand-in computes the rows of these prompts once, so the timings below
        # are the client, the store and the latency, not the stand-in's tiny model.
        timed(judges, args.scores, together=True)
        asked = [f.requests() for f in fakes]  # one phase's requests, per server
        alone = {jid: timed({jid: j}, args.scores, together=False) for jid, j in judges.items()}
        sequential = timed(judges, args.scores, together=False)
        concurrent = timed(judges, args.scores, together=True)
    slower = max(alone.values())
    print(
        f"{args.scores} readings per judge, endpoint concurrency {args.concurrency}, "
        f"latency {' / '.join(f'{ms:g}' for ms in args.latency_ms)} ms per request, "
        f"{' / '.join(map(str, asked))} requests per judge"
    )
    for jid, wall in alone.items():
        print(f"  {jid} alone:                 {wall:7.3f} s")
    print(f"  both, one after another:      {sequential:7.3f} s")
    print(f"  both at once:                 {concurrent:7.3f} s")
    print(f"  at once / slower alone:       {concurrent / slower:7.2f}")
    print(f"  one after another / at once:  {sequential / concurrent:7.2f}")


if __name__ == "__main__":
    main()
