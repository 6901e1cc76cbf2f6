#!/usr/bin/env python3
"""Mechanical mutation testing of system/ against the scenario catalogue and the fuzzer.

Generates mutants of the reference system by rule (relational, boundary, logical, negate,
boolean, delete, enum, return), deterministically: the same source gives the same mutants with
the same ids and hashes. Each mutant is built in a scratch copy of the repository and judged by
`onejob run scenarios/` (the catalogue), then, if the catalogue passed, by a bounded
`onejob fuzz` campaign. See tests/mutation/README.md.

Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT_DIR = Path(__file__).resolve().parent
DEFAULT_REPO = SCRIPT_DIR.parent.parent
DEFAULT_FILES = [
    "system/service/*.cpp",
    "system/domain/*.cpp",
    "system/adapters/memory_store.cpp",
]
# The defect table (off by default), and the always-on assertions' message formatting (it runs
# only once an assertion has failed, which already fails the run).
ALWAYS_EXCLUDED = {"system/service/defects.cpp", "system/domain/check.cpp"}
RULES = ["relational", "boundary", "logical", "negate", "boolean", "delete", "enum", "return"]
OUTCOMES = ["stillborn", "equivalent", "killed-catalogue", "killed-fuzz", "survived", "not-run"]


class SetupError(Exception):
    """A bad flag or a broken setup: exit 2."""


# ---- source masking ---------------------------------------------------------------------------


def mask_source(text: str) -> str:
    """`text` with comments and the contents of string and character literals blanked (spaces,
    newlines kept), so positions and line numbers stay those of the source."""
    out = list(text)
    n = len(text)

    def blank(start: int, end: int) -> None:
        for k in range(max(start, 0), min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    i = 0
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == '"':
            prefix = re.search(r"\w*$", text[max(0, i - 8) : i]).group(0)
            raw = prefix in ("R", "u8R", "uR", "UR", "LR")
            m = re.match(r'"([^()\\ \n]{0,16})\(', text[i:]) if raw else None
            if m:
                close = ")" + m.group(1) + '"'
                j = text.find(close, i + m.end())
                j = n if j < 0 else j + len(close)
                blank(i + 1, j - 1)
                i = j
                continue
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            if i > 0 and text[i - 1].isalnum():  # a digit separator (1'000)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def match_close(mtext: str, open_at: int, opener: str = "(", closer: str = ")") -> int:
    """Index of the bracket closing the one at `open_at` in masked text, or -1."""
    depth = 0
    for k in range(open_at, len(mtext)):
        ch = mtext[k]
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return k
    return -1


def bracket_balance(s: str) -> int:
    return sum(s.count(o) for o in "([{") - sum(s.count(c) for c in ")]}")


# ---- enums ------------------------------------------------------------------------------------


def parse_enums(root: Path) -> dict[str, list[str]]:
    """Every `enum class` declared in system/**/*.hpp, by qualified name (enclosing structs and
    classes, no namespaces): {"AttemptState": [...], "UpdateAttemptResult::Outcome": [...]}."""
    enums: dict[str, list[str]] = {}
    for header in sorted((root / "system").rglob("*.hpp")):
        mtext = mask_source(header.read_text(encoding="utf-8"))
        stack: list[str | None] = []
        last_stop = 0
        i = 0
        while i < len(mtext):
            ch = mtext[i]
            if ch == "{":
                head = mtext[last_stop:i]
                em = re.search(r"\benum\s+class\s+(\w+)\s*(?::\s*[\w:]+\s*)?$", head)
                if em:
                    close = match_close(mtext, i, "{", "}")
                    body = mtext[i + 1 : close]
                    members = [re.match(r"\s*(\w+)", part) for part in body.split(",")]
                    scope = [s for s in stack if s]
                    name = "::".join(scope + [em.group(1)])
                    enums[name] = [m.group(1) for m in members if m]
                    i = close + 1
                    last_stop = i
                    continue
                sm = re.search(r"\b(?:struct|class)\s+(\w+)\b[^;{}()]*$", head)
                stack.append(sm.group(1) if sm and "enum" not in head else None)
                last_stop = i + 1
            elif ch == "}":
                if stack:
                    stack.pop()
                last_stop = i + 1
            elif ch == ";":
                last_stop = i + 1
            i += 1
    enums.pop("Defect", None)  # defects are off by default: swapping them is equivalent
    return enums


# ---- mutants ----------------------------------------------------------------------------------


@dataclasses.dataclass
class Mutant:
    path: str  # repository-relative, e.g. system/service/worker.cpp
    line: int  # first line of the change, 1-based
    end_line: int  # last line replaced, inclusive
    rule: str
    index: int  # 1, 2, ... among this rule's mutants on this line
    original: list[str]  # the lines line..end_line as they are
    mutated: list[str]  # what replaces them (same count)
    desc: str
    hash: str = ""

    @property
    def short_path(self) -> str:
        return self.path[len("system/") :] if self.path.startswith("system/") else self.path

    @property
    def id(self) -> str:
        return f"{self.short_path}:{self.line}:{self.rule}:{self.index}"

    def changed_pair(self) -> tuple[str, str]:
        """The first line that differs, before and after (for reports)."""
        for before, after in zip(self.original, self.mutated):
            if before != after:
                return before.strip(), (after.strip() or "(deleted)")
        return self.original[0].strip(), self.mutated[0].strip()

    def span_text(self) -> str:
        if self.rule == "delete" and len(self.original) > 1:
            return f"(deleted lines {self.line}-{self.end_line})"
        return ""


class FileContext:
    """One source file, masked, with the lines and spans no mutant may touch."""

    DEFECT_RE = re.compile(r"\bDefect::|\bdefects_?\s*\.\s*has\s*\(")
    DEFECT_CALL_RE = re.compile(r"(!?)\s*((?:[A-Za-z_]\w*\s*(?:\.|->)\s*)*defects_?\s*\.\s*has\s*\()")

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.lines = text.split("\n")
        self.mtext = mask_source(text)
        self.mlines = self.mtext.split("\n")
        self.line_starts = [0]
        for ln in self.lines[:-1]:
            self.line_starts.append(self.line_starts[-1] + len(ln) + 1)
        self.dead = [False] * len(self.lines)
        self.protected: list[list[tuple[int, int]]] = [[] for _ in self.lines]
        self._mark_skips()

    def pos(self, offset: int) -> tuple[int, int]:
        """(line index, column) of a text offset."""
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo, offset - self.line_starts[lo]

    def _mark_span_dead(self, start_off: int, end_off: int) -> None:
        a, _ = self.pos(start_off)
        b, _ = self.pos(end_off)
        for k in range(a, b + 1):
            self.dead[k] = True

    def _mark_skips(self) -> None:
        for k, ml in enumerate(self.mlines):
            s = ml.strip()
            if not s or s.startswith("#"):
                self.dead[k] = True
        # Assertions and static assertions, over every line they span.
        for m in re.finditer(r"\b(ONEJOB_ASSERT|static_assert)\s*\(", self.mtext):
            close = match_close(self.mtext, m.end() - 1)
            self._mark_span_dead(m.start(), close if close >= 0 else m.end())
        # Lines that test a defect. When every test on a line is negated (`!defects.has(X)`,
        # true by default) the rest of the line is live: only the test itself is protected.
        for k, ml in enumerate(self.mlines):
            if not self.DEFECT_RE.search(ml):
                continue
            calls = list(self.DEFECT_CALL_RE.finditer(ml))
            mentions = len(re.findall(r"\bDefect::", ml))
            if calls and all(c.group(1) == "!" for c in calls) and mentions == len(calls):
                for c in calls:
                    close = match_close(ml, c.end() - 1)
                    self.protected[k].append((c.start(), close + 1 if close >= 0 else len(ml)))
            else:
                self.dead[k] = True
        # The body of `if (... defects.has(X) ...)` with a positive test and no top-level `||`:
        # it runs only with the defect on. (Its `else` stays live.)
        for m in re.finditer(r"\bif\s*\(", self.mtext):
            open_at = m.end() - 1
            close = match_close(self.mtext, open_at)
            if close < 0:
                continue
            cond = self.mtext[open_at + 1 : close]
            calls = list(self.DEFECT_CALL_RE.finditer(cond))
            if not any(c.group(1) != "!" for c in calls):
                continue
            if "||" in _top_level(cond):
                continue
            rest = self.mtext[close + 1 :]
            stripped = rest.lstrip()
            body_start = close + 1 + (len(rest) - len(stripped))
            if stripped.startswith("{"):
                body_end = match_close(self.mtext, body_start, "{", "}")
            else:
                body_end = self.mtext.find(";", body_start)
            if body_end >= 0:
                self._mark_span_dead(m.start(), body_end)
        # A statement `x = defects.has(X) && A && B;` over several lines: A and B are never
        # evaluated with the defect off, so its other lines are dead too.
        for k, ml in enumerate(self.mlines):
            calls = list(self.DEFECT_CALL_RE.finditer(ml))
            if not calls or calls[0].group(1) == "!":
                continue
            a = k
            while a > 0 and _previous_code_line(self, a)[-1] not in ";{}:":
                a -= 1
            b, balance = a, 0
            while b < len(self.mlines):
                balance += bracket_balance(self.mlines[b])
                if balance <= 0 and self.mlines[b].rstrip().endswith((";", "{")):
                    break
                b += 1
            if b >= len(self.mlines) or re.match(r"\s*(\}|if|while|for|else|return|co_return)\b", self.mlines[a]):
                continue
            statement = "\n".join(self.mlines[a : b + 1])
            top = _top_level(statement)
            if "||" in top or "?" in top:
                continue
            after = statement[statement.find(calls[0].group(2)) :]
            close = match_close(after, after.find("("))
            if close >= 0 and after[close + 1 :].lstrip().startswith("&&"):
                for j in range(a, b + 1):
                    self.dead[j] = True

    def edit_ok(self, k: int, start: int, end: int) -> bool:
        if self.dead[k]:
            return False
        for a, b in self.protected[k]:
            if start < b and end > a and not (start == end and (start <= a or start >= b)):
                return False
        return True


def _top_level(expr: str) -> str:
    """`expr` with everything inside brackets removed."""
    out, depth = [], 0
    for ch in expr:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _operand_group(mtext: str, at: int) -> tuple[int, int]:
    """[start, end) of the expression around the binary operator at `at`: out to the enclosing
    bracket, or a `;`, `,`, `?`, `:` or assignment at the same depth."""

    def boundary(i: int) -> bool:
        ch = mtext[i]
        if ch in ";,?":
            return True
        if ch == ":":
            return mtext[i - 1 : i + 1] != "::" and mtext[i : i + 2] != "::"
        if ch == "=":
            return mtext[i - 1] not in "=!<>" and mtext[i + 1 : i + 2] != "="
        return False

    depth, start = 0, 0
    for i in range(at - 1, -1, -1):
        ch = mtext[i]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                start = i + 1
                break
            depth -= 1
        elif depth == 0 and boundary(i):
            start = i + 1
            break
    depth, end = 0, len(mtext)
    for i in range(at, len(mtext)):
        ch = mtext[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                end = i
                break
            depth -= 1
        elif depth == 0 and boundary(i):
            end = i
            break
    head = re.match(r"\s*(?:(?:co_)?return\b)?\s*", mtext[start:end])
    return start + head.end(), end


def _parenthesise_mixed(mtext: str, at: int) -> list[tuple[int, str]]:
    """Insertions ((offset, text), offsets into `mtext`) that wrap each `&&` run among `||`s in the
    operator's group, or [] when the group does not mix them."""
    start, end = _operand_group(mtext, at)
    depth, ors, ands = 0, [], []
    for i in range(start, end):
        ch = mtext[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and mtext[i : i + 2] in ("||", "&&") and mtext[i - 1].isspace() and mtext[i + 2 : i + 3].isspace():
            (ors if mtext[i] == "|" else ands).append(i)
    if not ors or not ands:
        return []
    inserts = []
    bounds = [start - 2] + ors + [end]  # each part lies between two `||` (or the ends)
    for left, right in zip(bounds, bounds[1:]):
        a, b = left + 2, right
        if any(a <= x < b for x in ands):
            while mtext[a].isspace():
                a += 1
            while mtext[b - 1].isspace():
                b -= 1
            inserts += [(a, "("), (b, ")")]
    return inserts


def _previous_code_line(ctx: FileContext, k: int) -> str:
    j = k - 1
    while j >= 0:
        s = ctx.mlines[j].strip()
        if s and not s.startswith("#"):
            return s
        j -= 1
    return ";"


ASSIGN_RE = re.compile(r"^[^\s=(]+\s(=|\+=|-=|\*=|/=|%=|\|=|&=|\^=|<<=|>>=)(\s|$)")
CALL_RE = re.compile(r"^(?:::)?[A-Za-z_]\w*(?:\s*(?:::|\.|->)\s*[A-Za-z_~]\w*)*(?:<[^;()]*>)?\(")
NOT_EXPR_RE = re.compile(
    r"^(return|co_return|co_yield|break|continue|throw|goto|case|default|using|typedef|"
    r"static_assert|namespace|template|friend|struct|class|enum|public|private|protected|"
    r"if|for|while|do|switch|else|try|catch)\b"
)


def is_expression_statement_head(s: str) -> bool:
    """Whether a statement starting with `s` (masked, stripped) is an expression statement: a
    call, an assignment, ++/--, or co_await (never a declaration, a return or control flow)."""
    if NOT_EXPR_RE.match(s) or re.search(r"=\s*(default|delete)\s*;$", s):
        return False
    if s.startswith("co_await ") or s.startswith("++") or s.startswith("--"):
        return True
    if re.match(r"^[\w.\->\[\]*]+(\+\+|--)\s*;$", s):
        return True
    if ASSIGN_RE.match(s):
        return True
    return bool(CALL_RE.match(s))


class Generator:
    def __init__(self, enums: dict[str, list[str]]):
        self.enums = enums

    def mutants(self, path: str, text: str) -> list[Mutant]:
        ctx = FileContext(path, text)
        found: list[Mutant] = []
        counters: dict[tuple[int, str], int] = {}

        def add(rule: str, edits: list[tuple[int, int, int, str]], desc: str,
                delete_lines: tuple[int, int] | None = None) -> None:
            if delete_lines:
                a, b = delete_lines
                original = ctx.lines[a : b + 1]
                mutated = [""] * len(original)
            else:
                for k, s, e, _ in edits:
                    if not ctx.edit_ok(k, s, e):
                        return
                a = min(e[0] for e in edits)
                b = max(e[0] for e in edits)
                original = ctx.lines[a : b + 1]
                mutated = list(original)
                for k, s, e, new in sorted(edits, key=lambda x: (x[0], -x[1])):
                    ln = mutated[k - a]
                    mutated[k - a] = ln[:s] + new + ln[e:]
                if mutated == original:
                    return
            key = (a, rule)
            counters[key] = counters.get(key, 0) + 1
            found.append(Mutant(path, a + 1, b + 1, rule, counters[key], original, mutated, desc))

        enum_aliases = self._aliases(ctx)
        for k, ml in enumerate(ctx.mlines):
            if ctx.dead[k]:
                continue
            self._relational(ctx, k, ml, add)
            self._boundary(ctx, k, ml, add)
            self._logical(ctx, k, ml, add)
            self._negate(ctx, k, ml, add)
            self._boolean(ctx, k, ml, add)
            self._delete(ctx, k, ml, add)
            self._enum(ctx, k, ml, add, enum_aliases)
            self._early_return(ctx, k, ml, add)
        found.sort(key=lambda m: (m.line, RULES.index(m.rule), m.index))
        # The hash: file, the changed lines and their replacement, and which occurrence of those
        # lines in the file this is (identical lines are common: `if (!core->alive) co_return;`).
        seen: dict[str, int] = {}
        for m in found:
            body = "\n".join(x.strip() for x in m.original) + "\n=>\n" + "\n".join(x.strip() for x in m.mutated)
            occurrence = seen.get(body, 0)
            seen[body] = occurrence + 1
            digest = hashlib.sha256(f"{m.path}\n{occurrence}\n{body}".encode()).hexdigest()
            m.hash = digest[:10]
        return found

    # -- rules --

    @staticmethod
    def _relational(ctx, k, ml, add):
        swap = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
        for m in re.finditer(r"(?<= )(<=|>=|==|!=|<|>)(?= )", ml):
            op = m.group(1)
            add("relational", [(k, m.start(), m.end(), swap[op])], f"{op} -> {swap[op]}")

    @staticmethod
    def _boundary(ctx, k, ml, add):
        ops = r"(?:<=|>=|==|!=|<|>|\+=?|-=?|\*=?|/=?|%=?)"
        for m in re.finditer(r"(?<![\w.'])(\d+)(?![\w.'])", ml):
            before, after = ml[: m.start()], ml[m.end() :]
            if not (re.search(r"(?:^|\s)" + ops + r" $", before) or re.match(r"^ " + ops + r"(?:\s|$)", after)):
                continue
            n = int(m.group(1))
            for value in (n + 1, n - 1):
                add("boundary", [(k, m.start(), m.end(), str(value))], f"{n} -> {value}")

    @staticmethod
    def _logical(ctx, k, ml, add):
        for m in re.finditer(r"(?<= )(&&|\|\|)(?= )", ml):
            new = "||" if m.group(1) == "&&" else "&&"
            at = ctx.line_starts[k] + m.start()
            edits = [(k, m.start(), m.end(), new)]
            # `a || b || c` -> `a && b || c` would be refused by -Wparentheses (-Werror): spell the
            # precedence out, `(a && b) || c`, which means the same.
            for offset, text in _parenthesise_mixed(ctx.mtext[:at] + new + ctx.mtext[at + 2 :], at):
                line, col = ctx.pos(offset)
                edits.append((line, col, col, text))
            add("logical", edits, f"{m.group(1)} -> {new}")

    @staticmethod
    def _negate(ctx, k, ml, add):
        for m in re.finditer(r"\b(if|while)\s*\(", ml):
            if re.match(r"\s*constexpr\b", ml[m.end() - 1 :]):
                continue
            open_off = ctx.line_starts[k] + m.end() - 1
            close_off = match_close(ctx.mtext, open_off)
            if close_off < 0:
                continue
            cond = ctx.mtext[open_off + 1 : close_off]
            if ";" in _top_level(cond):  # an init-statement: negate what follows it
                depth = 0
                for j, ch in enumerate(cond):
                    depth += ch in "([{"
                    depth -= ch in ")]}"
                    if ch == ";" and depth == 0:
                        semi = j
                rest = cond[semi + 1 :]
                open_off += 1 + semi + 1 + (len(rest) - len(rest.lstrip()))
                ok, oc = ctx.pos(open_off)
                ck, ccol = ctx.pos(close_off)
                add("negate", [(ok, oc, oc, "!("), (ck, ccol, ccol, ")")],
                    f"{m.group(1)} (I; C) -> {m.group(1)} (I; !(C))")
                continue
            if re.match(r"^\s*(const\s+)?(auto\b|[\w:<>]+[\s*&]+\w+\s*(=(?!=)|\{))", cond):
                continue  # a declaration as the condition
            ck, ccol = ctx.pos(close_off)
            edits = [(k, m.end(), m.end(), "!("), (ck, ccol, ccol, ")")]
            add("negate", edits, f"{m.group(1)} (C) -> {m.group(1)} (!(C))")

    @staticmethod
    def _boolean(ctx, k, ml, add):
        for m in re.finditer(r"\b(true|false)\b", ml):
            new = "false" if m.group(1) == "true" else "true"
            add("boolean", [(k, m.start(), m.end(), new)], f"{m.group(1)} -> {new}")

    @staticmethod
    def _delete(ctx, k, ml, add):
        s = ml.strip()
        prev = _previous_code_line(ctx, k)
        if not s or prev[-1] not in ";{}:":
            return  # a continuation of something above
        indent = len(ml) - len(ml.lstrip())
        # `if (C) STATEMENT;` on one line: the statement becomes `{}`.
        m = re.match(r"(?:\}\s*else\s+)?(?:else\s+)?if\s*\(", s)
        if m:
            open_col = indent + m.end() - 1
            close_col = match_close(ml, open_col)
            if close_col < 0:
                return
            rest = ml[close_col + 1 :]
            stmt = rest.strip()
            if stmt.endswith(";") and bracket_balance(stmt) == 0 and is_expression_statement_head(stmt):
                start = close_col + 1 + (len(rest) - len(rest.lstrip()))
                text = ctx.lines[k][start : len(ml.rstrip())]
                add("delete", [(k, start, len(ml.rstrip()), "{}")], text[:70])
            return
        if not is_expression_statement_head(s):
            return
        # A whole statement: this line, or this line and the ones its brackets hold open.
        balance, end = 0, k
        while True:
            cur = ctx.mlines[end]
            balance += bracket_balance(cur)
            if balance == 0 and cur.rstrip().endswith(";"):
                break
            if balance < 0 or end - k >= 20 or end + 1 >= len(ctx.mlines):
                return
            end += 1
        for j in range(k, end + 1):
            if ctx.dead[j] or ctx.protected[j]:
                return
        first = ctx.lines[k].strip() if end == k else ctx.lines[k].strip() + " ..."
        add("delete", [], first[:70], delete_lines=(k, end))

    @staticmethod
    def _aliases(ctx) -> list[tuple[int, str, str]]:
        out = []
        for k, ml in enumerate(ctx.mlines):
            m = re.match(r"\s*using\s+(\w+)\s*=\s*([\w:]+)\s*;", ml)
            if m:
                out.append((k, m.group(1), m.group(2)))
        return out

    def _resolve_enum(self, qualifier: str, k: int, aliases) -> str | None:
        q = qualifier[len("onejob::") :] if qualifier.startswith("onejob::") else qualifier
        target = None
        for line_no, name, rhs in aliases:
            if line_no < k and name == q:
                target = rhs  # the nearest one above wins
        if target is not None:
            q = target[len("onejob::") :] if target.startswith("onejob::") else target
        return q if q in self.enums else None

    def _enum(self, ctx, k, ml, add, aliases):
        s = ml.strip()
        if s.startswith("case ") or re.search(r'\{\s*[\w:]+::\w+\s*,\s*"', ml) or s.startswith("using "):
            return  # switch labels (duplicates or -Wswitch) and name tables (names_cover)
        # A row of a table of pairs (the legal transitions): any swap of an entry removes that row
        # and adds one nothing asks for, so one swap per entry (the next value) says it all.
        table_row = re.match(r"^\s*\{\s*[\w:]+::\w+\s*,\s*[\w:]+::\w+\s*\},?\s*$", ml)
        for m in re.finditer(r"(?<![\w:])((?:[A-Za-z_]\w*::)+)([a-z_]\w*)\b", ml):
            qualifier = m.group(1)[:-2]
            enum = self._resolve_enum(qualifier, k, aliases)
            if not enum or m.group(2) not in self.enums[enum]:
                continue
            values = self.enums[enum]
            at = values.index(m.group(2))
            others = [values[(at + 1) % len(values)]] if table_row else values[at + 1 :] + values[:at]
            for other in others:
                if other != m.group(2):
                    add("enum", [(k, m.start(2), m.end(2), other)],
                        f"{qualifier}::{m.group(2)} -> {qualifier}::{other}")

    @staticmethod
    def _early_return(ctx, k, ml, add):
        m = re.match(r"^\s*(?:static\s+|inline\s+)*(void|Async<void>)\s+[\w:~]+\s*\(", ml)
        if not m:
            return
        open_off = ctx.line_starts[k] + m.end() - 1
        close_off = match_close(ctx.mtext, open_off)
        if close_off < 0:
            return
        tail = re.match(r"\s*((?:const|noexcept|override|final)\s*)*\{", ctx.mtext[close_off + 1 :])
        if not tail:
            return  # a declaration, or something this rule does not understand
        brace_off = close_off + 1 + tail.end()  # just after the body's `{`
        body_end = match_close(ctx.mtext, brace_off - 1, "{", "}")
        body = ctx.mtext[brace_off:body_end]
        if not body.strip():
            return
        coroutine = re.search(r"\bco_(await|return|yield)\b", body) is not None
        if m.group(1) == "void":
            stmt = "return;"
        elif coroutine:
            stmt = "co_return;"
        else:
            return  # Async<void> that returns another coroutine's Async: no early exit to add
        bk, bcol = ctx.pos(brace_off)
        add("return", [(bk, bcol, bcol, f" {stmt}")],
            f"insert {stmt}")


def matched_files(repo: Path, patterns: list[str], flag: str) -> set[str]:
    files: set[str] = set()
    for pattern in patterns:
        matched = glob.glob(str(repo / pattern), recursive=True)
        if not matched:
            raise SetupError(f"{flag}: {pattern!r} matches no file under {repo}")
        files.update(Path(f).resolve().relative_to(repo.resolve()).as_posix() for f in matched)
    return files


def expand_files(repo: Path, patterns: list[str], excluded: list[str] | None = None) -> list[str]:
    files = matched_files(repo, patterns, "--files") - matched_files(repo, excluded or [], "--exclude")
    return sorted(f for f in files if f.endswith((".cpp", ".hpp", ".h", ".cc")) and f not in ALWAYS_EXCLUDED)


def generate(root: Path, files: list[str]) -> list[Mutant]:
    gen = Generator(parse_enums(root))
    out: list[Mutant] = []
    for rel in files:
        out.extend(gen.mutants(rel, (root / rel).read_text(encoding="utf-8")))
    return out


def apply(text: str, m: Mutant) -> str:
    lines = text.split("\n")
    if lines[m.line - 1 : m.end_line] != m.original:
        raise RuntimeError(f"{m.id}: the source does not match the mutant")
    lines[m.line - 1 : m.end_line] = m.mutated
    return "\n".join(lines)


# ---- equivalents ------------------------------------------------------------------------------


def read_equivalents(path: Path) -> dict[str, tuple[str, str]]:
    """{hash: (id, reason)} from equivalent.txt: `HASH ID REASON...` a line, # comments."""
    out: dict[str, tuple[str, str]] = {}
    if not path.exists():
        return out
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 2)
        if len(parts) < 3 or not re.fullmatch(r"[0-9a-f]{10}", parts[0]):
            raise SetupError(f"{path}:{number}: expected 'HASH ID REASON', got {raw!r}")
        out[parts[0]] = (parts[1], parts[2])
    return out


# ---- selection --------------------------------------------------------------------------------


def select(mutants: list[Mutant], only: list[str], sample: int | None, seed: str) -> list[Mutant]:
    chosen = mutants
    if only:
        chosen = [m for m in chosen if any(o == m.hash or o in m.id for o in only)]
    if sample is not None and sample < len(chosen):
        # In the sample's own pseudo-random order, so a time budget cuts an unbiased part of it.
        keyed = sorted(chosen, key=lambda m: hashlib.sha256(f"{seed}\n{m.hash}".encode()).hexdigest())
        chosen = keyed[:sample]
    return chosen


# ---- the scratch copy and its build -----------------------------------------------------------


def git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], input=data, check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", b"") or b""
        raise SetupError(f"git {' '.join(args)} failed in {repo}: {detail.decode(errors='replace').strip() or error}") from error


def source_files(repo: Path, rev: str | None) -> dict[str, tuple[bytes, bool]]:
    """{path: (bytes, executable)}: with no `rev`, the tracked and unignored files as they are in
    the working tree (uncommitted edits included); with a `rev`, the files of that commit."""
    files: dict[str, tuple[bytes, bool]] = {}
    if rev is None:
        listed = git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard").decode()
        for rel in sorted(set(filter(None, listed.split("\0")))):
            path = repo / rel
            if path.is_file() and not path.is_symlink():
                files[rel] = (path.read_bytes(), os.access(path, os.X_OK))
        return files
    entries = []
    for entry in git(repo, "ls-tree", "-r", "-z", "--full-tree", rev).decode().split("\0"):
        if entry:
            meta, rel = entry.split("\t", 1)
            mode, kind, sha = meta.split()
            if kind == "blob" and mode != "120000":
                entries.append((rel, sha, mode == "100755"))
    blob = git(repo, "cat-file", "--batch", data="".join(f"{sha}\n" for _, sha, _ in entries).encode())
    at = 0
    for rel, sha, executable in entries:
        header_end = blob.index(b"\n", at)
        size = int(blob[at:header_end].split()[2])
        files[rel] = (blob[header_end + 1 : header_end + 1 + size], executable)
        at = header_end + 1 + size + 1
    return files


def sync_tree(files: dict[str, tuple[bytes, bool]], work: Path, keep: Path | None = None) -> int:
    """Makes `work` hold exactly `files`. Rewrites only files whose bytes differ (with a fresh
    mtime, so the build sees them), so an unchanged tree costs no rebuild. `keep`, a directory
    inside `work` (the build directory), is left alone. Returns how many files changed."""
    changed = 0
    work.mkdir(parents=True, exist_ok=True)
    for rel, (data, executable) in files.items():
        dst = work / rel
        if dst.is_file() and not dst.is_symlink() and dst.read_bytes() == data:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if dst.is_symlink():
            dst.unlink()
        dst.write_bytes(data)
        dst.chmod(0o755 if executable else 0o644)
        changed += 1
    for dirpath, dirnames, filenames in os.walk(work, topdown=False):
        if keep is not None and (Path(dirpath) == keep or keep in Path(dirpath).parents):
            continue
        for name in filenames:
            full = Path(dirpath) / name
            if full.relative_to(work).as_posix() not in files:
                full.unlink()
                changed += 1
        if Path(dirpath) != work and Path(dirpath) != keep and not os.listdir(dirpath):
            os.rmdir(dirpath)
    return changed


def uses_ccache(src: Path) -> bool:
    candidates = [src / "CMakeLists.txt"] + sorted((src / "cmake").glob("*.cmake"))
    return any("ccache" in p.read_text(encoding="utf-8", errors="replace") for p in candidates if p.is_file())


def configure(src: Path, build: Path, log) -> None:
    cache = build / "CMakeCache.txt"
    if cache.exists():
        home = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", cache.read_text(errors="replace"), re.M)
        if home and Path(home.group(1)).resolve() != src.resolve():
            raise SetupError(f"{build} was configured for {home.group(1)}, not {src}: use another --build-dir")
        return
    cmd = ["cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF"]
    generator = os.environ.get("ONEJOB_MUTATION_GENERATOR")
    if generator:
        cmd += ["-G", generator]
    elif shutil.which("ninja"):
        cmd += ["-G", "Ninja"]
    if not uses_ccache(src) and shutil.which("ccache"):
        cmd.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    log(f"configuring: {' '.join(cmd)}")
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise SetupError(f"cmake configure failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")


def run_group(cmd: list[str], cwd: Path | None, timeout: float, out) -> int | None:
    """Runs `cmd` in a session of its own, its output to the file `out`; kills the whole group
    (compilers, a hung onejob) on timeout or on any exception, Ctrl-C included. Returns the exit
    code, negative for a signal, None on timeout."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    finally:
        if proc.returncode is None:  # still running (a timeout, Ctrl-C) and not yet reaped
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


def build(build_dir: Path, jobs: int, timeout: float) -> tuple[bool, str, float]:
    start = time.monotonic()
    with tempfile.TemporaryFile() as out:
        code = run_group(["cmake", "--build", str(build_dir), "--target", "onejob", f"-j{jobs}"], None, timeout, out)
        out.seek(0)
        output = out.read().decode(errors="replace")
    if code is None:
        output += f"\nbuild timed out after {timeout:.0f}s"
    return code == 0, output, time.monotonic() - start


def first_error(output: str) -> tuple[str, str]:
    """(kind, message): kind 'warning' when -Werror made a warning fatal, else 'error'."""
    for line in output.splitlines():
        if re.search(r"\berror\b", line) and re.search(r"\.(cpp|hpp|h):\d+", line):
            kind = "warning" if "-Werror" in line else "error"
            return kind, line.strip()[:300]
    if "-Werror" in output:
        return "warning", ""
    tail = [ln for ln in output.splitlines() if ln.strip()][-1:] or [""]
    return "error", tail[0][:300]


# ---- running onejob ---------------------------------------------------------------------------


@dataclasses.dataclass
class Step:
    code: int | None  # exit code; None on timeout; negative: killed by that signal
    seconds: float
    stdout: str
    summary: dict | None

    @property
    def reason(self) -> str:
        if self.code is None:
            return "timeout"
        if self.code < 0:
            try:
                return f"signal {signal.Signals(-self.code).name}"
            except ValueError:
                return f"signal {-self.code}"
        return "violation" if self.code == 1 else f"exit {self.code}"


def run_step(cmd: list[str], cwd: Path, timeout: float, report_dir: Path) -> Step:
    shutil.rmtree(report_dir, ignore_errors=True)
    start = time.monotonic()
    with open(cwd / "output.txt", "w+b") as out:
        code = run_group(cmd, cwd, timeout, out)
        seconds = time.monotonic() - start
        out.seek(0)
        stdout = out.read(2_000_000).decode(errors="replace")
    summary = None
    try:
        summary = json.loads((report_dir / "summary.json").read_text())
    except (OSError, ValueError):
        pass
    return Step(code, seconds, stdout, summary)


def catalogue_killers(step: Step) -> dict:
    scenarios, clauses = [], set()
    if step.summary and isinstance(step.summary.get("results"), list):
        for r in step.summary["results"]:
            if r.get("status") != "pass":
                scenarios.append(r.get("name", "?"))
                for v in r.get("violations", []):
                    clauses.add(v.get("clause") or v.get("rule") or "?")
    else:  # no summary (a crash, a timeout): what the console said
        scenarios = re.findall(r"^FAIL\s+(\S+)", step.stdout, re.M)
        clauses = set(re.findall(r"^\s+\[([A-Za-z0-9_.]+)\]", step.stdout, re.M))
    return {"reason": step.reason, "exit": step.code, "scenarios": scenarios, "clauses": sorted(clauses)}


def fuzz_killers(step: Step) -> dict:
    found = {"reason": step.reason, "exit": step.code}
    failures = (step.summary or {}).get("failures") or []
    if failures:
        f = failures[0]
        found.update({"rule": f.get("clause") or f.get("rule"), "message": f.get("message", "")[:300],
                      "case": f.get("case"), "reproduce": f.get("reproduce")})
    else:
        m = re.search(r"^FAIL\s+case (\d+): \[([^\]]+)\] (.*)$", step.stdout, re.M)
        if m:
            found.update({"rule": m.group(2), "message": m.group(3)[:300], "case": int(m.group(1))})
    return found


# ---- reports ----------------------------------------------------------------------------------


def tally(results: list[dict]) -> dict:
    t = {o: 0 for o in OUTCOMES}
    t["mutants"] = len(results)
    t["stillborn_warning"] = 0
    for r in results:
        t[r["outcome"]] += 1
        if r["outcome"] == "stillborn" and r.get("stillborn", {}).get("kind") == "warning":
            t["stillborn_warning"] += 1
    judged = t["killed-catalogue"] + t["killed-fuzz"] + t["survived"]
    t["scored"] = judged
    t["score_catalogue"] = t["killed-catalogue"] / judged if judged else None
    t["score_total"] = (t["killed-catalogue"] + t["killed-fuzz"]) / judged if judged else None
    return t


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def table_rows(results: list[dict]) -> list[list[str]]:
    by_file: dict[str, list[dict]] = {}
    for r in results:
        by_file.setdefault(r["file"], []).append(r)
    rows = []
    for name in sorted(by_file) + ["total"]:
        t = tally(results if name == "total" else by_file[name])
        rows.append([name, str(t["mutants"]), str(t["stillborn"]), str(t["equivalent"]),
                     str(t["killed-catalogue"]), str(t["killed-fuzz"]), str(t["survived"]),
                     str(t["not-run"]), pct(t["score_catalogue"]), pct(t["score_total"])])
    return rows


HEADERS = ["file", "mutants", "stillborn", "equivalent", "killed: catalogue", "killed: fuzz only",
           "survived", "not run", "score: catalogue", "score: catalogue+fuzz"]


def text_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows + [HEADERS]) for i in range(len(HEADERS))]
    fmt = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    lines = [fmt(HEADERS), fmt(["-" * w for w in widths])]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines)


def md_table(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def survivors(results: list[dict]) -> list[dict]:
    return [r for r in results if r["outcome"] == "survived"]


def write_reports(report_dir: Path, meta: dict, results: list[dict]) -> None:
    report_dir.mkdir(parents=True, exist_ok=True)
    total = tally(results)
    doc = dict(meta, totals=total, table=[dict(zip(HEADERS, r)) for r in table_rows(results)], mutants=results)
    tmp = report_dir / "mutation.json.tmp"
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(report_dir / "mutation.json")
    md = ["# Mutation report", ""]
    md.append(f"Source: `{meta['source']['head']}`{' (with uncommitted changes)' if meta['source']['dirty'] else ''}; "
              f"{meta['selected']} of {meta['generated']} mutants selected"
              + (f" (sample {meta['settings']['sample']}, seed `{meta['settings']['seed']}`)" if meta['settings']['sample'] else "")
              + f"; fuzz: {'off' if meta['settings']['no_fuzz'] else str(meta['settings']['fuzz_cases']) + ' cases, seed 1'}.")
    md.append("")
    md.append(md_table(table_rows(results)))
    md.append("")
    md.append("Scores count compiled, non-equivalent mutants that were run. "
              f"Stillborn: {total['stillborn']} ({total['stillborn_warning']} by a warning made an error).")
    b = meta.get("baseline") or {}
    if b:
        fuzz = "off" if b.get("fuzz_s") is None else f"{b['fuzz_s']:.1f} s"
        md.append(f"Unmutated: build {b['build_s']:.1f} s, catalogue {b['catalogue_s']:.1f} s, fuzz {fuzz}.")
        md.append(f"Timeouts: catalogue {meta['settings']['cat_timeout_s']:.0f} s"
                  + ("" if b.get("fuzz_s") is None else f", fuzz {meta['settings']['fuzz_timeout_s']:.0f} s") + ".")
    md += ["", f"## Survivors ({len(survivors(results))})", ""]
    for r in survivors(results):
        md.append(f"- `{r['id']}` `{r['hash']}` ({r['rule']}: {r['desc']})")
        md.append(f"  - before: `{r['before']}`")
        md.append(f"  - after:  `{r['after']}`")
    wrong = [r for r in results if r["outcome"] == "equivalent" and r.get("observed", "").startswith("killed")]
    if wrong:
        md += ["", "## Listed as equivalent but killed (fix equivalent.txt)", ""]
        md += [f"- `{r['id']}` `{r['hash']}`: {r['observed']}" for r in wrong]
    if meta.get("stale_equivalents"):
        md += ["", "## equivalent.txt entries that match no mutant", ""]
        md += [f"- `{h}` {i}" for h, i in meta["stale_equivalents"]]
    (report_dir / "mutation.md").write_text("\n".join(md) + "\n")


def describe_source(repo: Path, rev: str | None) -> dict:
    if rev is not None:
        return {"repo": str(repo), "rev": rev, "head": git(repo, "rev-parse", f"{rev}^{{commit}}").decode().strip(),
                "dirty": False}
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    dirty = bool(git(repo, "status", "--porcelain", "--untracked-files=no").strip())
    return {"repo": str(repo), "rev": None, "head": head, "dirty": dirty}


# ---- main -------------------------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="mutate.py",
        description="Mutation testing of system/: generate mutants by rule, build each in a scratch "
                    "copy, and judge it by the scenario catalogue, then a bounded fuzz campaign.",
        epilog="Exit codes: 0 done (any score, unless --min-score fails); 1 the catalogue+fuzz score is "
               "below --min-score; 2 bad flags, a setup error, or the unmutated tree fails.",
    )
    p.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="the repository (default: %(default)s)")
    p.add_argument("--rev", metavar="REV", help="mutate the files of this commit (e.g. HEAD) instead of the working "
                   "tree with its uncommitted edits")
    p.add_argument("--files", nargs="+", metavar="GLOB", help="files to mutate, globs relative to the repository "
                   f"(default: {' '.join(DEFAULT_FILES)}); system/service/defects.cpp and system/domain/check.cpp are always left out")
    p.add_argument("--exclude", nargs="+", default=[], metavar="GLOB",
                   help="leave out these files (globs relative to the repository), e.g. one only unit tests reach")
    p.add_argument("--list", action="store_true", help="print the selected mutants and counts per rule and file; run nothing")
    p.add_argument("--only", action="append", default=[], metavar="ID_OR_SUBSTRING",
                   help="run only mutants whose id contains this, or whose hash is this (repeatable)")
    p.add_argument("--sample", type=int, metavar="K", help="pick K mutants pseudo-randomly (deterministic in --seed)")
    p.add_argument("--seed", default="1", help="the sample's seed, any string, e.g. a commit hash (default: 1)")
    p.add_argument("--time-budget", type=float, metavar="SECONDS", help="start no new mutant after this long")
    p.add_argument("--no-fuzz", action="store_true", help="judge by the catalogue only")
    p.add_argument("--fuzz-cases", type=int, default=5000, help="cases in each mutant's fuzz campaign (default: 5000)")
    p.add_argument("--skip-equivalent", action="store_true", help="do not run mutants listed in the equivalents file")
    p.add_argument("--equivalent", type=Path, default=SCRIPT_DIR / "equivalent.txt", help="the equivalents file (default: %(default)s)")
    p.add_argument("--work-dir", type=Path, default=Path("/tmp/mut/src"), help="scratch copy of the repository (default: %(default)s)")
    p.add_argument("--build-dir", type=Path, default=Path("/tmp/mut/build"), help="its build directory (default: %(default)s)")
    p.add_argument("--report-dir", type=Path, default=Path("reports/mutation"), help="where mutation.json and mutation.md go (default: %(default)s)")
    p.add_argument("--build-jobs", type=int, default=2, help="parallel compile jobs (default: 2)")
    p.add_argument("--timeout-factor", type=float, default=10.0, help="a step's timeout, as a multiple of the unmutated run's time (default: 10)")
    p.add_argument("--min-timeout", type=float, default=30.0, help="the least timeout of a catalogue or fuzz step, seconds (default: 30)")
    p.add_argument("--merge", nargs="+", type=Path, metavar="MUTATION_JSON",
                   help="run nothing: merge these reports (shards, or a later re-run of some mutants, "
                        "whose results replace the earlier ones; a later run of every mutant of a file "
                        "replaces all earlier results for that file) into one in --report-dir, judging "
                        "equivalence by the equivalents file as it is now")
    p.add_argument("--min-score", type=float, metavar="PERCENT", help="exit 1 when the catalogue+fuzz score is below this (0-100)")
    args = p.parse_args(argv)
    if args.sample is not None and args.sample < 1:
        p.error("--sample must be at least 1")
    if args.fuzz_cases < 1:
        p.error("--fuzz-cases must be at least 1")
    if args.build_jobs < 1:
        p.error("--build-jobs must be at least 1")
    if args.min_score is not None and not 0 <= args.min_score <= 100:
        p.error("--min-score is a percentage, 0-100")
    return args


def print_list(mutants: list[Mutant], selected: list[Mutant], equivalents: dict) -> None:
    for m in selected:
        before, after = m.changed_pair()
        eq = "  [equivalent]" if m.hash in equivalents else ""
        print(f"{m.id}  {m.hash}  {m.desc}{eq}")
        print(f"    - {before[:110]}")
        print(f"    + {(m.span_text() or after)[:110]}")
    rules = {r: 0 for r in RULES}
    files: dict[str, dict[str, int]] = {}
    for m in selected:
        rules[m.rule] += 1
        files.setdefault(m.short_path, {r: 0 for r in RULES})[m.rule] += 1
    print()
    widths = [max([len(f) for f in files] + [5])] + [max(len(r), 4) for r in RULES]
    head = ["file"] + RULES + ["total"]
    print("  ".join(h.ljust(widths[0]) if i == 0 else h.rjust(widths[min(i, len(RULES))] if i <= len(RULES) else 5)
                    for i, h in enumerate(head)))
    for f in sorted(files):
        cells = [f.ljust(widths[0])] + [str(files[f][r]).rjust(widths[i + 1]) for i, r in enumerate(RULES)]
        print("  ".join(cells + [str(sum(files[f].values())).rjust(5)]))
    cells = ["total".ljust(widths[0])] + [str(rules[r]).rjust(widths[i + 1]) for i, r in enumerate(RULES)]
    print("  ".join(cells + [str(len(selected)).rjust(5)]))
    listed = sum(1 for m in selected if m.hash in equivalents)
    print(f"\n{len(selected)} of {len(mutants)} mutants selected; {listed} of them listed as equivalent")
    stale = [h for h in equivalents if h not in {m.hash for m in mutants}]
    if stale:
        print(f"equivalent.txt: {len(stale)} entries match no mutant: {', '.join(stale)}")


def whole_file_run(doc: dict) -> bool:
    settings = doc.get("settings", {})
    return (settings.get("sample") is None and not settings.get("only") and not settings.get("merged")
            and all(r["outcome"] != "not-run" for r in doc["mutants"]))


def merge_reports(paths: list[Path], equivalents: dict, report_dir: Path) -> int:
    """One report from several: a mutant run in a later report replaces its earlier result; each
    result is judged equivalent or not by `equivalents` as it is now."""
    docs = []
    for path in paths:
        try:
            docs.append(json.loads(path.read_text()))
        except (OSError, ValueError) as error:
            raise SetupError(f"{path}: not a mutation report ({error})")
    by_hash: dict[str, dict] = {}
    for doc in docs:
        # A report that ran every mutant of a file (no sample, no --only, none left unrun) is that
        # file's result as of its commit: earlier results for the file, some of whose mutants may
        # no longer exist after an edit, are dropped rather than mixed in.
        if whole_file_run(doc):
            files = {r["file"] for r in doc["mutants"]}
            by_hash = {h: r for h, r in by_hash.items() if r["file"] not in files}
        for r in doc["mutants"]:
            if r["outcome"] == "not-run" and r["hash"] in by_hash:
                continue
            by_hash[r["hash"]] = dict(r)
    results = list(by_hash.values())
    for r in results:
        if r["outcome"] in ("stillborn", "not-run"):
            continue
        observed = r.get("observed", r["outcome"])
        if r["hash"] in equivalents:
            r["outcome"], r["equivalent_reason"] = "equivalent", equivalents[r["hash"]][1]
        else:
            r["outcome"] = observed
            r.pop("equivalent_reason", None)
    heads = list(dict.fromkeys(d["source"]["head"][:12] for d in docs))
    first = docs[0]
    meta = {
        "source": {"head": " + ".join(heads), "dirty": any(d["source"].get("dirty") for d in docs)},
        "settings": dict(first["settings"], sample=None, merged=[str(p) for p in paths]),
        "generated": len(results),
        "selected": len(results),
        "baseline": first.get("baseline"),
        "stale_equivalents": [],
        "seconds": round(sum(d.get("seconds", 0) for d in docs), 1),
    }
    write_reports(report_dir, meta, results)
    total = tally(results)
    print(text_table(table_rows(results)))
    print(f"\nmerged {len(paths)} reports ({', '.join(heads)}): score: catalogue "
          f"{pct(total['score_catalogue'])}, catalogue+fuzz {pct(total['score_total'])} of "
          f"{total['scored']} compiled non-equivalent mutants; {total['survived']} survivors")
    print(f"reports: {report_dir / 'mutation.md'}, {report_dir / 'mutation.json'}")
    return 0


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    repo = args.repo.resolve()
    if not (repo / "system").is_dir():
        raise SetupError(f"{repo} has no system/: not the onejob repository (use --repo)")
    equivalents = read_equivalents(args.equivalent)
    if args.merge:
        return merge_reports(args.merge, equivalents, args.report_dir)
    source = describe_source(repo, args.rev)
    if args.list:
        if args.rev is None:
            files = expand_files(repo, args.files or DEFAULT_FILES, args.exclude)
            mutants = generate(repo, files)
        else:
            with tempfile.TemporaryDirectory(prefix="mutate-list-") as tree:
                sync_tree(source_files(repo, args.rev), Path(tree))
                files = expand_files(Path(tree), args.files or DEFAULT_FILES, args.exclude)
                mutants = generate(Path(tree), files)
        selected = select(mutants, args.only, args.sample, args.seed)
        print_list(mutants, selected, equivalents)
        return 0

    started = time.monotonic()
    log = lambda msg: print(msg, flush=True)
    work, build_dir = args.work_dir.resolve(), args.build_dir.resolve()
    if work == repo or repo in work.parents:
        raise SetupError("--work-dir must be outside the repository")
    changed = sync_tree(source_files(repo, args.rev), work, keep=build_dir if work in build_dir.parents else None)
    log(f"scratch copy {work} ({'working tree' if args.rev is None else source['head'][:12]}): {changed} files refreshed")
    files = expand_files(work, args.files or DEFAULT_FILES, args.exclude)
    mutants = generate(work, files)
    selected = select(mutants, args.only, args.sample, args.seed)
    if not selected:
        raise SetupError("no mutant selected")
    if args.skip_equivalent:
        skipped = [m for m in selected if m.hash in equivalents]
        selected = [m for m in selected if m.hash not in equivalents]
        log(f"--skip-equivalent: {len(skipped)} listed mutants left out")
    configure(work, build_dir, log)

    with tempfile.TemporaryDirectory(prefix="mutate-") as scratch:
        return run_mutants(args, source, equivalents, files, mutants, selected, work, build_dir,
                           Path(scratch), started, log)


def run_mutants(args, source, equivalents, files, mutants, selected, work, build_dir, scratch, started, log) -> int:
    # The unmutated tree first: it must build and pass, and it sets the timeouts.
    ok, output, build_s = build(build_dir, args.build_jobs, 3600)
    if not ok:
        raise SetupError(f"the unmutated tree does not build:\n{output[-4000:]}")
    found = [p for p in [build_dir / "onejob", build_dir / "harness" / "onejob"] + sorted(build_dir.rglob("onejob"))
             if p.is_file() and os.access(p, os.X_OK)]
    if not found:
        raise SetupError(f"no onejob executable in {build_dir} after the build")
    onejob = found[0]
    cat_cmd = [str(onejob), "run", str(work / "scenarios"), "--report-dir", str(scratch / "catalogue")]
    fuzz_cmd = [str(onejob), "fuzz", "--cases", str(args.fuzz_cases), "--seed", "1", "--report-dir", str(scratch / "fuzz")]
    base_cat = run_step(cat_cmd, scratch, 3600, scratch / "catalogue")
    if base_cat.code != 0:
        raise SetupError(f"the unmutated catalogue fails ({base_cat.reason}); fix that first:\n{base_cat.stdout[-3000:]}")
    base_fuzz = None
    if not args.no_fuzz:
        base_fuzz = run_step(fuzz_cmd, scratch, 3600, scratch / "fuzz")
        if base_fuzz.code != 0:
            raise SetupError(f"the unmutated fuzz campaign fails ({base_fuzz.reason}); fix that first:\n{base_fuzz.stdout[-3000:]}")
    cat_timeout = max(args.min_timeout, args.timeout_factor * base_cat.seconds)
    fuzz_timeout = max(args.min_timeout, args.timeout_factor * base_fuzz.seconds) if base_fuzz else 0
    log(f"unmutated: build {build_s:.1f}s, catalogue {base_cat.seconds:.1f}s, "
        + (f"fuzz {base_fuzz.seconds:.1f}s ({args.fuzz_cases} cases)" if base_fuzz else "fuzz off")
        + f"; timeouts: catalogue {cat_timeout:.0f}s" + (f", fuzz {fuzz_timeout:.0f}s" if base_fuzz else ""))

    meta = {
        "source": source,
        "settings": {"files": files, "sample": args.sample, "seed": args.seed, "only": args.only,
                     "no_fuzz": args.no_fuzz, "fuzz_cases": args.fuzz_cases, "time_budget": args.time_budget,
                     "skip_equivalent": args.skip_equivalent, "cat_timeout_s": round(cat_timeout, 1),
                     "fuzz_timeout_s": round(fuzz_timeout, 1)},
        "generated": len(mutants),
        "selected": len(selected),
        "baseline": {"build_s": round(build_s, 2), "catalogue_s": round(base_cat.seconds, 2),
                     "fuzz_s": round(base_fuzz.seconds, 2) if base_fuzz else None},
        "stale_equivalents": sorted((h, i) for h, (i, _) in equivalents.items() if h not in {m.hash for m in mutants}),
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }

    def record(m: Mutant, outcome: str, **extra) -> dict:
        before, after = m.changed_pair()
        r = {"id": m.id, "hash": m.hash, "file": m.short_path, "line": m.line, "end_line": m.end_line,
             "rule": m.rule, "desc": m.desc, "before": before, "after": m.span_text() or after,
             "outcome": outcome}
        if m.hash in equivalents:
            r["equivalent_reason"] = equivalents[m.hash][1]
        r.update(extra)
        return r

    results: list[dict] = []
    report_dir = args.report_dir
    width = len(str(len(selected)))
    interrupted = False
    try:
        for number, m in enumerate(selected, 1):
            if args.time_budget is not None and time.monotonic() - started > args.time_budget:
                left = selected[number - 1 :]
                log(f"time budget of {args.time_budget:g}s spent: {len(left)} mutants not run")
                results += [record(x, "not-run") for x in left]
                break
            t0 = time.monotonic()
            target = work / m.path
            original = target.read_text(encoding="utf-8")
            try:
                target.write_text(apply(original, m), encoding="utf-8")
                ok, output, b_s = build(build_dir, args.build_jobs, 1800)
            finally:
                # A fresh mtime: the next build recompiles the original (a ccache hit).
                target.write_text(original, encoding="utf-8")
            timing = {"build_s": round(b_s, 2)}
            listed = m.hash in equivalents
            if not ok:
                kind, message = first_error(output)
                r = record(m, "stillborn", stillborn={"kind": kind, "message": message}, timing=timing)
            else:
                cat = run_step(cat_cmd, scratch, cat_timeout, scratch / "catalogue")
                timing["catalogue_s"] = round(cat.seconds, 2)
                if cat.code != 0:
                    observed, killers = "killed-catalogue", {"catalogue": catalogue_killers(cat)}
                elif args.no_fuzz:
                    observed, killers = "survived", {}
                else:
                    fz = run_step(fuzz_cmd, scratch, fuzz_timeout, scratch / "fuzz")
                    timing["fuzz_s"] = round(fz.seconds, 2)
                    if fz.code != 0:
                        observed, killers = "killed-fuzz", {"fuzz": fuzz_killers(fz)}
                    else:
                        observed, killers = "survived", {}
                r = record(m, "equivalent" if listed else observed, observed=observed, killers=killers, timing=timing)
            timing["total_s"] = round(time.monotonic() - t0, 2)
            results.append(r)
            note = ""
            if r["outcome"] == "stillborn":
                note = f"({r['stillborn']['kind']})"
            elif r.get("observed", "").startswith("killed"):
                k = r["killers"].get("catalogue") or r["killers"].get("fuzz")
                what = ",".join(k.get("clauses", [])[:4]) if "clauses" in k else (k.get("rule") or "")
                note = f"{k['reason']} {what}" + (f" in {len(k['scenarios'])} scenarios" if k.get("scenarios") else "")
            if r["outcome"] == "equivalent":
                note = f"(listed; observed {r['observed']}) " + note
            parts = " ".join(f"{n.split('_')[0]} {v:.1f}" for n, v in timing.items() if n != "total_s")
            log(f"[{number:>{width}}/{len(selected)}] {m.id} {m.hash} {r['outcome']} {timing['total_s']:.1f}s ({parts}) {note}".rstrip())
            write_reports(report_dir, meta, results)
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted: restoring the scratch copy")
    finally:
        build(build_dir, args.build_jobs, 3600)  # leave the unmutated binary behind

    done = {r["id"] for r in results}
    results += [record(x, "not-run") for x in selected if x.id not in done]
    meta["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    meta["seconds"] = round(time.monotonic() - started, 1)
    write_reports(report_dir, meta, results)

    total = tally(results)
    print()
    print(text_table(table_rows(results)))
    print(f"\nstillborn: {total['stillborn']} ({total['stillborn_warning']} by a warning made an error); "
          f"score: catalogue {pct(total['score_catalogue'])}, catalogue+fuzz {pct(total['score_total'])} "
          f"of {total['scored']} compiled non-equivalent mutants")
    surv = survivors(results)
    print(f"\nsurvivors ({len(surv)}):")
    for r in surv:
        print(f"  {r['id']}  {r['hash']}  {r['rule']}: {r['desc']}")
        print(f"      - {r['before']}")
        print(f"      + {r['after']}")
    wrong = [r for r in results if r["outcome"] == "equivalent" and r.get("observed", "").startswith("killed")]
    for r in wrong:
        print(f"warning: {r['id']} {r['hash']} is listed as equivalent but was {r['observed']}")
    print(f"\nreports: {report_dir / 'mutation.md'}, {report_dir / 'mutation.json'}")
    if interrupted:
        return 130
    if args.min_score is not None and (total["score_total"] is None or 100 * total["score_total"] < args.min_score):
        print(f"catalogue+fuzz score {pct(total['score_total'])} is below --min-score {args.min_score:g}%")
        return 1
    return 0


def _terminate(signum, frame):
    raise KeyboardInterrupt  # SIGTERM stops a run as Ctrl-C does: the scratch copy is restored


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started in the background
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        sys.exit(main(sys.argv[1:]))
    except SetupError as error:
        print(f"mutate.py: {error}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("mutate.py: interrupted", file=sys.stderr)
        sys.exit(130)
