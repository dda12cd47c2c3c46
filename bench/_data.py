"""The public data sets (read from the path given on the command line, never copied) and the
generated memory texts the speed runs store."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

LOCOMO_FILE: Final = "locomo10.json"
DEVBENCH_FILE: Final = "devbench_dataset.json"
# Category ids as the file uses them (see the data README: several harnesses remap these).
CATEGORY_NAMES: Final[dict[int, str]] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
}
_TURN_ID: Final = re.compile(r"D(\d+):(\d+)")
# 'D:11:26' is D11:26 with a stray colon; the only malformed shape that names one turn exactly.
_TURN_ID_STRAY_COLON: Final = re.compile(r"D:(\d+):(\d+)")
_SEPARATORS: Final = re.compile(r"[;,\s]+")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str

    @property
    def content(self) -> str:
        """How a turn is stored: ``"<speaker>: <text>"``."""
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Evidence:
    """A question's evidence turns after parsing, and what parsing had to do to get them."""

    turns: tuple[str, ...]
    malformed: bool  # some raw string was not exactly one well-formed turn id
    dropped: tuple[str, ...]  # tokens that name no turn of this conversation


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: Evidence


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]


def parse_evidence(raw: list[Any], known: set[str]) -> Evidence:
    """Split strings holding several ids (``'D8:6; D9:17'``, ``'D9:1 D4:4'``), repair the
    stray colon of ``'D:11:26'``, and drop what names no turn of the conversation (``'D'``)."""
    turns: list[str] = []
    dropped: list[str] = []
    malformed = False
    for item in raw:
        text = str(item).strip()
        if not _TURN_ID.fullmatch(text):
            malformed = True
        for token in filter(None, _SEPARATORS.split(text)):
            repaired = _TURN_ID_STRAY_COLON.fullmatch(token)
            turn = f"D{repaired[1]}:{repaired[2]}" if repaired else token
            if _TURN_ID.fullmatch(turn) and turn in known:
                if turn not in turns:
                    turns.append(turn)
            else:
                dropped.append(token)
    return Evidence(turns=tuple(turns), malformed=malformed, dropped=tuple(dropped))


def load_locomo(data: Path) -> list[Conversation]:
    samples = json.loads((data / LOCOMO_FILE).read_text())
    conversations = []
    for sample in samples:
        talk = sample["conversation"]
        sessions = sorted(
            (int(key.removeprefix("session_")), value)
            for key, value in talk.items()
            if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
        )
        turns = [
            Turn(dia_id=t["dia_id"], speaker=t["speaker"], text=t["text"])
            for _, session in sessions
            for t in session
        ]
        known = {t.dia_id for t in turns}
        questions = [
            Question(
                text=q["question"],
                category=int(q["category"]),
                evidence=parse_evidence(q.get("evidence") or [], known),
            )
            for q in sample["qa"]
            if int(q["category"]) in CATEGORY_NAMES
        ]
        conversations.append(Conversation(sample["sample_id"], turns, questions))
    return conversations


@dataclass(frozen=True)
class DevMemory:
    id: str
    content: str
    memory_type: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class DevQuery:
    id: str
    category: str
    question: str
    expected: tuple[str, ...]


@dataclass(frozen=True)
class DevBench:
    memories: list[DevMemory] = field(default_factory=list)
    queries: list[DevQuery] = field(default_factory=list)


def load_devbench(data: Path) -> DevBench:
    raw = json.loads((data / DEVBENCH_FILE).read_text())
    return DevBench(
        memories=[
            DevMemory(
                id=m["id"],
                content=m["content"],
                memory_type=m.get("memory_type", ""),
                tags=tuple(m.get("tags") or ()),
            )
            for m in raw["memories"]
        ],
        queries=[
            DevQuery(
                id=q["id"],
                category=q["category"],
                question=q["question"],
                expected=tuple(q.get("expected_tags") or ()),
            )
            for q in raw["queries"]
        ],
    )


# Long technical notes written for this benchmark (bench/data/, ours): the second kind of text
# a change to ranking must not get worse on.
TECH_NOTES_DIR: Final = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class TechQuestion:
    text: str
    answers: tuple[str, ...]
    hard: bool  # written to share no distinctive word with its note


@dataclass(frozen=True)
class TechNotes:
    notes: dict[str, str]
    questions: list[TechQuestion]

    def first(self, count: int) -> TechNotes:
        """The first ``count`` notes and the questions they answer (the smoke run's subset)."""
        notes = dict(list(self.notes.items())[:count])
        return TechNotes(notes, [q for q in self.questions if set(q.answers) <= set(notes)])


def load_tech_notes(folder: Path = TECH_NOTES_DIR) -> TechNotes:
    notes: dict[str, str] = {}
    questions: list[TechQuestion] = []
    for path in sorted(folder.glob("tech_notes_*.json")):
        raw = json.loads(path.read_text())
        notes.update((n["id"], n["text"]) for n in raw["notes"])
        questions += [TechQuestion(q["q"], tuple(q["answers"]), False) for q in raw["questions"]]
    for path in sorted(folder.glob("tech_questions_hard_*.json")):
        raw = json.loads(path.read_text())
        questions += [TechQuestion(q["q"], tuple(q["answers"]), True) for q in raw["questions"]]
    return TechNotes(notes=notes, questions=[q for q in questions if set(q.answers) <= set(notes)])


# Long technical and study chats (BEAM 500K, chats 1-10): messages of a few thousand characters,
# code included. The third kind of text every ranking rule is measured on.
BEAM_FILE: Final = "beam500k-dev.json"


@dataclass(frozen=True)
class BeamMessage:
    id: int
    role: str
    content: str

    @property
    def stored(self) -> str:
        """How a message is remembered: ``"<role>: <content>"`` (the data README's rule)."""
        return f"{self.role}: {self.content}"


@dataclass(frozen=True)
class BeamQuestion:
    kind: str
    text: str
    # Message ids of this chat that hold the answer (empty for abstention questions).
    evidence: tuple[int, ...]
    # knowledge_update only: the message that states the fact first, and the one updating it.
    original: tuple[int, ...] = ()
    updated: tuple[int, ...] = ()


@dataclass(frozen=True)
class BeamChat:
    chat: int
    title: str
    messages: list[BeamMessage]
    questions: list[BeamQuestion]

    def first(self, count: int) -> BeamChat:
        """The first ``count`` messages and the questions they answer (the smoke run's subset)."""
        messages = self.messages[:count]
        known = {m.id for m in messages}
        return BeamChat(
            self.chat,
            self.title,
            messages,
            [
                q
                for q in self.questions
                if q.kind == "abstention" or (q.evidence and set(q.evidence) <= known)
            ],
        )


def _flat_ids(raw: Any) -> list[int]:
    """Every integer in a ``source_chat_ids`` value: a list, or a dict of lists."""
    if raw is None:
        return []
    if isinstance(raw, dict):
        return [i for value in raw.values() for i in _flat_ids(value)]
    if isinstance(raw, list):
        return [i for value in raw for i in _flat_ids(value)]
    return [raw] if isinstance(raw, int) else []


def load_beam(data: Path) -> list[BeamChat]:
    """The chats with each question's evidence: the ids of ``source_chat_ids`` that exist in the
    chat (179 of the 180 non-abstention questions have some); abstention questions keep none."""
    chats = []
    for raw in json.loads((data / BEAM_FILE).read_text()):
        messages = [BeamMessage(m["id"], m["role"], m["content"]) for m in raw["messages"]]
        known = {m.id for m in messages}
        questions = []
        for kind, asked in raw["questions"].items():
            for q in asked:
                source = q.get("source_chat_ids")
                evidence = tuple(dict.fromkeys(i for i in _flat_ids(source) if i in known))
                if kind != "abstention" and not evidence:
                    continue
                update = source if kind == "knowledge_update" and isinstance(source, dict) else {}
                questions.append(
                    BeamQuestion(
                        kind=kind,
                        text=q["question"],
                        evidence=evidence if kind != "abstention" else (),
                        original=tuple(
                            i for i in _flat_ids(update.get("original_info")) if i in known
                        ),
                        updated=tuple(
                            i for i in _flat_ids(update.get("updated_info")) if i in known
                        ),
                    )
                )
        chats.append(BeamChat(int(raw["chat"]), raw["title"], messages, questions))
    return chats


class MemoryTexts:
    """Realistic memory texts: LoCoMo turns as stored ("speaker: text").

    ``stored(i)`` cycles through the turns, so a tenant larger than the data set holds each turn
    several times (the exact scan's cost does not depend on what the rows say, and each distinct
    text is embedded once). ``fresh(k)`` joins two turns from different places: new text of
    realistic length for the remember calls that are timed, never equal to a stored one."""

    def __init__(self, conversations: list[Conversation]) -> None:
        self._turns = [t.content for c in conversations for t in c.turns]
        if not self._turns:
            raise ValueError("the LoCoMo file holds no turns")

    @property
    def distinct(self) -> int:
        return len(self._turns)

    def stored(self, index: int) -> str:
        return self._turns[index % len(self._turns)]

    def fresh(self, index: int) -> str:
        count = len(self._turns)
        first = self._turns[index % count]
        second = self._turns[(index * 7919 + 104_729) % count]
        return f"{first} {second.split(': ', 1)[-1]}"


__all__ = [
    "BEAM_FILE",
    "CATEGORY_NAMES",
    "BeamChat",
    "BeamMessage",
    "BeamQuestion",
    "Conversation",
    "DevBench",
    "DevMemory",
    "DevQuery",
    "Evidence",
    "MemoryTexts",
    "Question",
    "Turn",
    "load_beam",
    "load_devbench",
    "load_locomo",
    "parse_evidence",
]
