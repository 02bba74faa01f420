"""Device names and memory sizes as a design writes them, turned into accelerate's form."""

from __future__ import annotations

import pytest

from diarylab.model_access.devices import device_name, size_bytes, torch_name


@pytest.mark.parametrize(
    ("written", "name"),
    [
        (0, 0),
        (3, 3),
        ("1", 1),
        ("cuda", 0),
        ("cuda:2", 2),
        (" CUDA:1 ", 1),
        ("cpu", "cpu"),
        ("CPU", "cpu"),
        ("disk", "disk"),
        ("mps", "mps"),
    ],
)
def test_every_way_to_write_a_device_has_one_name(written, name):
    assert device_name(written) == name


@pytest.mark.parametrize("written", ["gpu", "cuda:", "cuda:x", "cuda:-1", -1, True, 1.5, None, ""])
def test_what_is_no_device_is_refused_with_a_fix(written):
    with pytest.raises(ValueError, match="fix: name a GPU by its index"):
        device_name(written)


def test_torch_writes_a_gpu_index_as_cuda():
    assert [torch_name(d) for d in (0, 3, "cpu", "disk")] == ["cuda:0", "cuda:3", "cpu", "disk"]


@pytest.mark.parametrize(
    ("written", "size"),
    [
        (1024, 1024),
        ("1024", 1024),
        ("500B", 500),
        ("500MB", 500 * 10**6),
        ("70GiB", 70 * 2**30),
        ("70gib", 70 * 2**30),
        ("1.5 TB", 15 * 10**11),
        ("2KiB", 2048),
        ("3TiB", 3 * 2**40),
    ],
)
def test_sizes_read_as_bytes(written, size):
    assert size_bytes(written) == size


@pytest.mark.parametrize("written", ["lots", "5 GBs", "-5GB", "GB", 0, "0MB", -1, True, 2.5])
def test_what_is_no_size_is_refused_with_a_fix(written):
    with pytest.raises(ValueError, match='fix: write bytes .* "70GiB"'):
        size_bytes(written)
