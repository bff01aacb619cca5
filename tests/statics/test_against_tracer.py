"""The static facts name functions exactly as the tracer does, and trace calls become dynamic edges."""

from __future__ import annotations

from pathlib import Path

from histeg.runs.commands import shell_command
from histeg.runs.runner import run_traces
from histeg.statics.callgraph import add_dynamic_edges, load_call_graph
from histeg.statics.export import export_static_facts
from histeg.statics.observed import observed_call_graph
from histeg.store import CALL_GRAPH, FUNCTIONS
from histeg.traces.call_tree import Call
from histeg.traces.reader import read_trace
from tests.conftest import validate_output
from tests.statics.versions import make_version

PROJECT = {
    "src/zoo/__init__.py": "from .animals import Animal, Dog\n",
    "src/zoo/animals.py": """
        import asyncio
        import functools


        def loud(function):
            @functools.wraps(function)
            def wrapper(*args):
                return function(*args).upper()

            return wrapper


        class Animal:
            def __init__(self, name):
                self.name = name

            def speak(self):
                return f"{self.name} makes {self.sound()}"

            def sound(self):
                return "a sound"


        class Dog(Animal):
            def sound(self):
                return "woof"

            @loud
            def shout(self):
                return self.speak()

            def speak(self):
                base = super().speak()

                def exclaim(text):
                    return text + "!"

                return exclaim(base)

            def puppies(self, n):
                for i in range(n):
                    yield Dog(f"{self.name} {i}")

            async def fetch(self):
                await asyncio.sleep(0)
                return self.sound()
    """,
    "tests/test_zoo.py": """
        import asyncio

        from zoo import Animal, Dog


        def test_speak():
            assert Animal("cat").speak() == "cat makes a sound"
            assert Dog("rex").shout() == "REX MAKES WOOF!"


        def test_generator_and_coroutine():
            assert [d.name for d in Dog("rex").puppies(2)] == ["rex 0", "rex 1"]
            assert asyncio.run(Dog("rex").fetch()) == "woof"
    """,
}


def _pairs(call: Call) -> list[tuple[str, str]]:
    return [(call.function.ident, child.function.ident) for _, child in call.children] + [
        pair for _, child in call.children for pair in _pairs(child)
    ]


def test_traced_functions_are_in_the_table_and_calls_become_edges(tmp_path: Path) -> None:
    store = make_version(tmp_path, PROJECT)
    export_static_facts(store, 0)
    table = {(f["identifier"], f["firstLine"]) for f in validate_output(store.file(0, FUNCTIONS))["functions"]}
    summary = run_traces(store, 0, timeout=120)
    assert [run.outcome for run in summary.runs] == ["passed"]
    traces = [read_trace(store.version_dir(0) / path) for path in summary.trace_files]
    traced = {(call.function.ident, call.function.first_line) for t in traces for root in t.entry_points for call in root.walk()}
    assert ("zoo.animals:Dog.speak.<locals>.exclaim", 35) in traced
    assert ("zoo.animals:Dog.shout", 28) in traced
    assert traced <= table

    graph = load_call_graph(store.file(0, CALL_GRAPH))
    static = {edge for edge in graph.edges if graph.edges[edge]["kind"] == "static"}
    pairs = [pair for t in traces for root in t.entry_points for pair in _pairs(root)]
    added = add_dynamic_edges(graph, pairs)
    kinds = {edge: graph.edges[edge]["kind"] for edge in graph.edges}
    assert kinds["zoo.animals:Dog.speak", "zoo.animals:Animal.speak"] == "both"  # super().speak()
    assert kinds["zoo.animals:Animal.speak", "zoo.animals:Dog.sound"] == "dynamic"  # self.sound() overridden below
    assert kinds["zoo.animals:Animal.speak", "zoo.animals:Animal.sound"] == "both"
    assert added == sum(1 for edge, kind in kinds.items() if kind == "dynamic")
    assert {edge for edge, kind in kinds.items() if kind in ("static", "both")} == static

    stored = store.file(0, CALL_GRAPH).read_bytes()
    observed = observed_call_graph(store, 0)  # the edges in the traces' indexes, as the decoded calls show them
    assert {edge: observed.edges[edge]["kind"] for edge in observed.edges} == kinds
    assert store.file(0, CALL_GRAPH).read_bytes() == stored
    validate_output(store.file(0, CALL_GRAPH))

    # traced again with a program that never makes a Dog: the calls only the old traces showed are gone
    cat_only = shell_command("python -c 'import zoo; zoo.Animal(\"cat\").speak()'")
    assert [run.outcome for run in run_traces(store, 0, [cat_only], timeout=120).runs] == ["passed"]
    again = observed_call_graph(store, 0)
    assert not again.has_edge("zoo.animals:Animal.speak", "zoo.animals:Dog.sound")
    assert again.edges["zoo.animals:Animal.speak", "zoo.animals:Animal.sound"]["kind"] == "both"
    assert again.edges["zoo.animals:Dog.speak", "zoo.animals:Animal.speak"]["kind"] == "static"
