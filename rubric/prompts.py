"""What a judge is shown: a JudgePrompt (raw text, or a chat ending in an assistant prefill) and
the versioned TOML templates (rubric/templates/*.toml) that build one from an entry or a reply.

A judge's answer is read from the token that comes right after the prompt, so every template
ends with an assistant prefill ("Score: ", "Answer:") that leaves the answer as the very next
token. The template file's sha256 travels with every score made from it."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diarylab.foundation.datafiles import HashedDataFile
from diarylab.foundation.errors import LabError

TEMPLATES_DIR = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class JudgePrompt:
    """Either `text` (exactly what a local model sees, special tokens written out) or `messages`
    plus an assistant `prefill` the judge continues. An empty prefill means the answer is the
    first token of a fresh assistant turn."""

    text: str | None = None
    messages: tuple[tuple[str, str], ...] = ()
    prefill: str = ""
    answers: tuple[str, str] = ("yes", "no")  # a yes/no question's words: (yes, no)

    @staticmethod
    def raw(text: str) -> JudgePrompt:
        if not text:
            raise LabError("the judge prompt is empty", where="judge prompt")
        return JudgePrompt(text=text)

    @staticmethod
    def chat(
        messages: Sequence[Mapping[str, str]],
        prefill: str = "",
        answers: tuple[str, str] = ("yes", "no"),
    ) -> JudgePrompt:
        if not messages:
            raise LabError("the judge conversation has no messages", where="judge prompt")
        pairs = []
        for i, m in enumerate(messages):
            if "role" not in m or "content" not in m:
                raise LabError(
                    f"message {i} needs 'role' and 'content'",
                    where="judge prompt",
                    fix='write each message as {"role": ..., "content": ...}',
                )
            pairs.append((str(m["role"]), str(m["content"])))
        return JudgePrompt(messages=tuple(pairs), prefill=prefill, answers=answers)

    def chat_messages(self) -> list[dict[str, str]]:
        """The messages a chat template renders, the prefill as an open assistant turn."""
        out = [{"role": r, "content": c} for r, c in self.messages]
        if self.prefill:
            out.append({"role": "assistant", "content": self.prefill})
        return out

    def key_fields(self) -> dict[str, Any]:
        words = {} if self.answers == ("yes", "no") else {"answers": list(self.answers)}
        if self.text is not None:
            return {"text": self.text, **words}
        return {"messages": [list(m) for m in self.messages], "prefill": self.prefill, **words}


@dataclass(frozen=True)
class TemplateRef:
    """Which template (and which exact file) a score came from."""

    id: str
    version: int
    sha256: str

    def to_record(self) -> dict[str, Any]:
        return {"id": self.id, "version": self.version, "sha256": self.sha256}

    @staticmethod
    def from_record(record: Mapping[str, Any]) -> TemplateRef:
        return TemplateRef(str(record["id"]), int(record["version"]), str(record["sha256"]))

    @staticmethod
    def attach(record: Mapping[str, Any], template: TemplateRef | None) -> dict[str, Any]:
        """A reading's stored record: its raw call record, plus the template it came from
        (enough to recompute the reading and to know which file asked)."""
        out = dict(record)
        if template is not None:
            out["template"] = template.to_record()
        return out

    @staticmethod
    def split(record: Mapping[str, Any]) -> tuple[dict[str, Any], TemplateRef | None]:
        """A stored reading's raw call record and its template (None where it names none)."""
        raw = {k: v for k, v in record.items() if k != "template"}
        named = record.get("template")
        return raw, TemplateRef.from_record(named) if named else None


class Template(HashedDataFile):
    """A judge template file's `[template]` table; `sha256` and `path` are those of the file."""

    file_table = "template"

    id: str
    version: int
    system: str = ""
    user: str
    prefill: str
    # extra named texts (the reply template words the earlier exchanges with these)
    history_intro: str | None = None
    history_entry: str | None = None
    history_reply: str | None = None

    @property
    def parts(self) -> dict[str, str]:
        names = ("history_intro", "history_entry", "history_reply")
        return {k: v for k in names if (v := getattr(self, k)) is not None}

    def part(self, name: str) -> str:
        if name not in self.parts:
            raise LabError(
                "missing", where=f"{self.path} template.{name}", fix=f'add {name} = "..."'
            )
        return self.parts[name]

    @property
    def ref(self) -> TemplateRef:
        return TemplateRef(self.id, self.version, self.sha256)

    def prompt(self, **values: str) -> JudgePrompt:
        try:
            system = self.system.format(**values)
            user = self.user.format(**values)
        except KeyError as exc:
            raise LabError(
                f"template needs a value for {exc}",
                where=str(self.path),
                fix="pass every {name} the template uses",
            ) from exc
        messages = [{"role": "system", "content": system}] if system.strip() else []
        messages.append({"role": "user", "content": user})
        return JudgePrompt.chat(messages, prefill=self.prefill)


def load_template(name_or_path: str | Path) -> Template:
    """A template by name (rubric/templates/NAME.toml) or by path."""
    path = Path(name_or_path)
    if path.suffix != ".toml":
        path = TEMPLATES_DIR / f"{name_or_path}.toml"
    return Template.from_file(path)


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
