"""mutate.py --merge on hand-made reports: a later result replaces an earlier one, a later run of
every mutant of a file replaces all earlier results for that file, and equivalence is judged by the
equivalents file given at merge time."""
import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import mutate  # noqa: E402


def mutant(file: str, line: int, outcome: str, hash_: str) -> dict:
    return {"id": f"{file}:{line}:negate:1", "hash": hash_, "file": file, "line": line,
            "end_line": line, "rule": "negate", "desc": "if (C) -> if (!(C))",
            "before": "if (x) {", "after": "if (!(x)) {", "outcome": outcome, "observed": outcome,
            "killers": {}}


def report(head: str, mutants: list[dict], **settings) -> dict:
    base = {"files": [], "sample": None, "seed": "1", "only": [], "no_fuzz": False,
            "fuzz_cases": 5000, "time_budget": None}
    base.update(settings)
    return {"source": {"head": head, "dirty": False}, "settings": base, "generated": len(mutants),
            "selected": len(mutants), "baseline": None, "stale_equivalents": [], "seconds": 1.0,
            "mutants": mutants}


class MergeTest(unittest.TestCase):
    def merge(self, docs: list[dict], equivalents: dict | None = None) -> dict:
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for i, doc in enumerate(docs):
                path = Path(tmp) / f"r{i}.json"
                path.write_text(json.dumps(doc))
                paths.append(path)
            out = Path(tmp) / "merged"
            self.assertEqual(mutate.merge_reports(paths, equivalents or {}, out), 0)
            return json.loads((out / "mutation.json").read_text())

    def outcomes(self, doc: dict) -> dict:
        return {r["hash"]: r["outcome"] for r in doc["mutants"]}

    def test_a_later_result_replaces_an_earlier_one(self):
        first = report("a" * 12, [mutant("service/x.cpp", 1, "survived", "1111111111"),
                                  mutant("service/y.cpp", 2, "killed-catalogue", "2222222222")])
        rerun = report("b" * 12, [mutant("service/x.cpp", 1, "killed-fuzz", "1111111111")],
                       only=["1111111111"])
        merged = self.merge([first, rerun])
        self.assertEqual(self.outcomes(merged),
                         {"1111111111": "killed-fuzz", "2222222222": "killed-catalogue"})
        self.assertEqual(merged["totals"]["score_total"], 1.0)

    def test_a_whole_file_run_drops_the_files_earlier_mutants(self):
        first = report("a" * 12, [mutant("service/x.cpp", 1, "survived", "1111111111"),
                                  mutant("service/x.cpp", 9, "survived", "3333333333"),
                                  mutant("service/y.cpp", 2, "killed-catalogue", "2222222222")])
        # x.cpp was edited: line 9's mutant no longer exists, a new one does.
        whole = report("b" * 12, [mutant("service/x.cpp", 1, "killed-catalogue", "1111111111"),
                                  mutant("service/x.cpp", 5, "survived", "4444444444")],
                       files=["system/service/x.cpp"])
        merged = self.merge([first, whole])
        self.assertEqual(self.outcomes(merged), {"1111111111": "killed-catalogue",
                                                 "4444444444": "survived",
                                                 "2222222222": "killed-catalogue"})

    def test_a_sampled_or_unfinished_run_drops_nothing(self):
        first = report("a" * 12, [mutant("service/x.cpp", 9, "survived", "3333333333")])
        sampled = report("b" * 12, [mutant("service/x.cpp", 1, "killed-catalogue", "1111111111")],
                         sample=1)
        unfinished = report("c" * 12, [mutant("service/x.cpp", 2, "killed-catalogue", "5555555555"),
                                       mutant("service/x.cpp", 3, "not-run", "6666666666")])
        merged = self.merge([first, sampled, unfinished])
        self.assertIn("3333333333", self.outcomes(merged))

    def test_equivalence_is_judged_at_merge_time(self):
        first = report("a" * 12, [mutant("service/x.cpp", 1, "survived", "1111111111")])
        merged = self.merge([first], {"1111111111": ("service/x.cpp:1:negate:1", "no effect")})
        self.assertEqual(self.outcomes(merged), {"1111111111": "equivalent"})
        self.assertIsNone(merged["totals"]["score_total"])


if __name__ == "__main__":
    unittest.main()
