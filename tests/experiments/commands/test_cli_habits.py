"""The command line's habits: `--version`, the nearest command or option for a misspelt one,
and help text on every option of every command (the test walks the parser)."""

from __future__ import annotations

import argparse

import pytest

from diarylab.experiments.cli import build_parser, main


def test_version_prints_the_installed_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"diarylab {version('diarylab')}"


@pytest.mark.parametrize(
    ("argv", "guess"),
    [
        (["rnu", "x.toml"], "'run'"),
        (["design", "chek", "x.toml"], "'check'"),
        (["plan", "experiments/designs/demo.toml", "--tiemout", "3"], "'--timeout'"),
        (["serve-lines", "experiments/designs/demo.toml", "--gpuu", "X"], "'--gpu'"),
    ],
)
def test_a_misspelt_word_gets_the_nearest_one(argv, guess, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"did you mean {guess}?" in err[0], err


def test_a_word_near_nothing_gets_no_guess(capsys):
    assert main(["zzzzzz"]) == 2
    assert "did you mean" not in capsys.readouterr().err


def _bare(parser: argparse.ArgumentParser, prefix: list[str]) -> list[str]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _bare(sub, [*prefix, name])
        elif not isinstance(action, argparse._HelpAction) and not (action.help or "").strip():
            out.append(f"{' '.join(prefix)} {'/'.join(action.option_strings) or action.dest}")
    return out


def test_every_option_of_every_command_says_what_it_does():
    assert _bare(build_parser(), ["diarylab"]) == []


def test_the_walk_finds_an_option_without_help():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers().add_parser("x")
    sub.add_argument("--silent")
    assert _bare(parser, ["p"]) == ["p x --silent"]
