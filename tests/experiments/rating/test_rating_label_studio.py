"""The rating sample through a real Label Studio server (label-studio 1.23.2, in its own venv:
scripts/setup-label-studio.sh), started on loopback by this tier and stopped after it: a
project per kind of item made from the labeling configs `rate sample` writes (the server
validates them), the tasks imported, annotations posted through its REST API as an annotator's
browser posts them, the project exported as JSON, and the export imported by `rate import`."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import diarylab
from diarylab.experiments.cli import main
from diarylab.testing.rating_fixtures import example_with_sample, judge_readings, simulated_answers

TOKEN = "diarylab-rating-tier-token"
USER = "rater@lab.test"


def _label_studio() -> str:
    found = os.environ.get("DIARYLAB_LABEL_STUDIO")
    if not found:
        venv = Path(
            os.environ.get("DIARYLAB_LABEL_STUDIO_VENV")
            or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
            / "diarylab"
            / "label-studio-venv"
        )
        if (venv / ".diarylab-label-studio-installed").is_file():
            found = str(venv / "bin" / "label-studio")
    if not found and os.environ.get("CI"):
        pytest.fail("CI must run the Label Studio tier: scripts/setup-label-studio.sh (make test)")
    if not found:
        pytest.skip("no Label Studio here: scripts/setup-label-studio.sh installs it (make test)")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    command = _label_studio()
    data = tmp_path_factory.mktemp("label-studio")
    port = _free_port()
    env = {**os.environ, "LABEL_STUDIO_BASE_DATA_DIR": str(data), "LABEL_STUDIO_HOST": ""}
    log = (data / "server.log").open("w")
    proc = subprocess.Popen(
        [command, "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port),
         "--username", USER, "--password", "rating-tier-pass", "--user-token", TOKEN,
         "--enable-legacy-api-token", "--data-dir", str(data)],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"label-studio exited: {(data / 'server.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail("label-studio did not become healthy in 300 s")
            time.sleep(1)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def _api(base: str, method: str, path: str, body: object = None) -> tuple[int, object]:
    request = urllib.request.Request(
        base + path,
        method=method,
        headers={"Authorization": f"Token {TOKEN}", "Content-Type": "application/json"},
        data=None if body is None else json.dumps(body).encode(),
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


@pytest.mark.label_studio
def test_a_sample_round_trips_through_label_studio(server, tmp_path, capsys):
    folder = tmp_path / "run"
    sample = example_with_sample(folder, "--n", "8", "--raters", "2")
    answers = simulated_answers(sample, judge_readings(folder), noisy_copy=True, seed=3)
    ls = folder / "rating" / "label-studio"
    exports = []
    for name, text_tag in (("entries", "entry"), ("replies", "reply")):
        config = (ls / f"{name}.xml").read_text(encoding="utf-8")
        status, project = _api(
            server, "POST", "/api/projects", {"title": name, "label_config": config}
        )
        assert status == 201, project
        pid = project["id"]  # type: ignore[index]
        tasks = json.loads((ls / f"{name}.json").read_text(encoding="utf-8"))
        status, imported = _api(server, "POST", f"/api/projects/{pid}/import", tasks)
        assert status == 201 and imported["task_count"] == len(tasks), imported  # type: ignore[index]
        status, listed = _api(server, "GET", f"/api/tasks?project={pid}&page_size=1000")
        assert status == 200, listed
        for task in listed["tasks"]:  # type: ignore[index]
            given = answers[task["data"]["item_id"]]
            result = [
                {"from_name": key, "to_name": text_tag, "origin": "manual",
                 "type": "choices" if isinstance(value, str) else "number",
                 "value": {"choices": [value]} if isinstance(value, str) else {"number": value}}
                for key, value in given.items()
            ]  # fmt: skip
            status, made = _api(
                server, "POST", f"/api/tasks/{task['id']}/annotations", {"result": result}
            )
            assert status == 201, made
        status, exported = _api(server, "GET", f"/api/projects/{pid}/export?exportType=JSON")
        assert status == 200 and len(exported) == len(tasks), exported  # type: ignore[arg-type]
        path = tmp_path / f"{name}-export.json"
        path.write_text(json.dumps(exported), encoding="utf-8")
        exports.append(path)

    # the server refuses a config that points a question at a text it does not have: what it
    # accepted above it had checked
    broken = (ls / "entries.xml").read_text().replace('toName="entry"', 'toName="nothing"', 1)
    status, _ = _api(server, "POST", "/api/projects", {"title": "broken", "label_config": broken})
    assert status == 400

    assert main(["rate", "import", str(folder), *map(str, exports)]) == 0
    per_rater = sum(len(v) for v in answers.values())
    assert f"{per_rater} answers stored now" in capsys.readouterr().out
    with diarylab.open_run(folder) as run:
        stored = run.store.select("ratings", ["rater", "question_key", "item_id", "value"])
    # the JSON export names an annotator by user id (the first user is 1)
    assert {r[0] for r in stored} == {"ls-1"}
    got = {(item, key): value for _, key, item, value in stored}
    for item, given in answers.items():
        for key, value in given.items():
            want = {"yes": 1.0, "no": 0.0}.get(value, value) if isinstance(value, str) else value
            assert got[(item, key)] == want
    assert main(["report", str(folder)]) == 0
    assert "Judges against people" in (folder / "report" / "findings.md").read_text()
