"""The confirmation sample: a few entry points per (function, kind), widened where the sample shows noise."""

from __future__ import annotations

from histeg.compare.calls import CallDivergence
from histeg.compare.divergences import Divergence, _confirm_sampled, noise_of
from histeg.compare.noise import NoiseMap, Unstable
from histeg.compare.sampling import OWN_FUNCTION, choose, groups, unsettled
from histeg.records.divergences import EntryKey


def key(name: str) -> EntryKey:
    return EntryKey("pytest", f"tests/test_x.py::{name}", "call", f"tests.test_x:{name}", 0)


def test_each_group_gets_its_quota_and_one_test_serves_every_function_it_saw_diverge() -> None:
    wide = [key(f"wide{i}") for i in range(3)]  # diverged in both functions
    narrow = [key(f"narrow{i:02}") for i in range(20)]
    by_group = groups(
        [(entry, "lib:core", ["return", "lines"]) for entry in wide + narrow] + [(entry, "lib:leaf", ["return"]) for entry in wide]
    )
    assert set(by_group) == {("lib:core", "return"), ("lib:core", "lines"), ("lib:leaf", "return")}
    chosen = choose(by_group, 4)
    assert set(wide) <= chosen and len(chosen) == 4  # the three wide ones cover the leaf, one narrow one fills the core's quota
    assert chosen == choose(by_group, 4), "the same divergences give the same sample"
    assert choose(by_group, 0) == set(wide + narrow)
    assert choose(by_group, 100) == set(wide + narrow)


def test_a_group_is_unsettled_only_by_instability_of_its_own_kind_under_a_sampled_entry_point() -> None:
    entries = [key(f"t{i}") for i in range(8)]
    by_group = groups([(entry, "lib:f", ["return", "lines"]) for entry in entries])
    chosen = choose(by_group, 2)
    sampled, other = min(chosen), next(entry for entry in entries if entry not in chosen)
    assert unsettled(by_group, chosen, {}) == set()
    assert unsettled(by_group, chosen, {(other, "lib:f"): Unstable(kinds={"return"})}) == set(), "not sampled: says nothing"
    assert unsettled(by_group, chosen, {(sampled, "lib:g"): Unstable(kinds={"return"})}) == set(), "another function"
    assert unsettled(by_group, chosen, {(sampled, "lib:f"): Unstable(kinds={"return"})}) == {("lib:f", "return")}


def test_tests_own_functions_form_one_group_per_kind_and_their_noise_unsettles_it() -> None:
    """A core change seen by every test makes each test's own function diverge under that test alone: grouped by name,
    that is a group per test, and the sample would be the whole suite."""
    entries = [key(f"t{i:02}") for i in range(30)]
    by_group = groups([(entry, entry.root, ["lines"]) for entry in entries] + [(entry, "lib:core", ["return"]) for entry in entries])
    assert set(by_group) == {(OWN_FUNCTION, "lines"), ("lib:core", "return")}
    chosen = choose(by_group, 4)
    assert len(chosen) == 4
    sampled = min(chosen)
    assert unsettled(by_group, chosen, {(sampled, sampled.root): Unstable(kinds={"lines"})}) == {(OWN_FUNCTION, "lines")}
    assert unsettled(by_group, chosen, {(sampled, "tests.test_x:other"): Unstable(kinds={"lines"})}) == set(), "not its own function"
    import_time = EntryKey("pytest", "", "", "lib:core", 0)
    assert groups([(import_time, "lib:core", ["return"])]) == {("lib:core", "return"): {import_time}}, "no test owns it"


def test_under_a_test_that_failed_after_changed_code_ran_only_instability_between_runs_is_noise() -> None:
    """``noise_of``: a test whose outcome changed after changed code ran in its process (``carried``) keeps what its re-runs
    alone did not show again; what differed between runs of one version stays noise; other entry points are untouched."""
    carried_entry, other = key("after_add"), key("clock")
    unstable = {
        (carried_entry, "lib:first"): Unstable(kinds={"return"}, natures={"values"}),  # only not seen again alone
        (carried_entry, "lib:now"): Unstable(kinds={"return", "lines"}, natures={"values"}, between_runs={"lines"}),
        (other, "lib:first"): Unstable(kinds={"return"}, natures={"values"}),
    }
    noise = noise_of(unstable, {carried_entry: ["lib:add"]})
    assert set(noise) == {(carried_entry, "lib:now"), (other, "lib:first")}
    assert noise[(carried_entry, "lib:now")].kinds == {"lines"}
    assert noise[(other, "lib:first")].kinds == {"return"}
    assert unstable[(carried_entry, "lib:now")].kinds == {"return", "lines"}, "the re-runs' findings are kept as found"


def test_what_the_re_runs_alone_did_not_show_again_under_a_carried_entry_widens_no_sample() -> None:
    entries = [key(f"t{i}") for i in range(8)]
    between = [Divergence(entry, CallDivergence("lib:first", (entry.root,), (0,), returns=1)) for entry in entries]
    asked: list[set[EntryKey]] = []
    unstable: NoiseMap = {}

    def confirm_round(divergences: list[Divergence], runs: int, number: int, purpose: str) -> tuple[int, int]:
        chosen = {divergence.entry for divergence in divergences}
        asked.append(chosen)
        for entry in chosen:  # run alone, every one of them agrees on both versions: not seen again
            unstable[(entry, "lib:first")] = Unstable(kinds={"return"}, natures={"values"})
        return runs, runs

    _, report = _confirm_sampled(between, unstable, {entry: ["lib:add"] for entry in entries}, 2, 2, confirm_round)
    assert len(asked) == 1 and len(asked[0]) == 2 and report is not None and report.widened_entry_points == 0
    asked.clear()
    _, report = _confirm_sampled(between, unstable, {}, 2, 2, confirm_round)  # no changed code ran before them: noise widens
    assert len(asked) == 2 and report is not None and report.widened_entry_points == 6
