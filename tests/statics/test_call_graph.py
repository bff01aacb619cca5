"""Static call edges, one resolution rule at a time, and the graph operations built on them."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from histeg.atomic import write_json
from histeg.errors import HistegError
from histeg.records.statics import CallSites
from histeg.statics.callgraph import add_dynamic_edges, call_distance, call_graph_record, load_call_graph
from histeg.statics.export import export_static_facts
from histeg.store import CALL_GRAPH
from tests.conftest import validate_output
from tests.statics.versions import make_version

PROJECT = {
    "src/shop/__init__.py": """
        from .pricing import *
        from . import stock
    """,
    "src/shop/pricing.py": """
        from .tax import rate as tax_rate

        def price(amount):
            return amount * tax_rate()

        def discount(amount):
            return price(amount) - 1
    """,
    "src/shop/tax.py": """
        def rate():
            return 2
    """,
    "src/shop/stock.py": """
        import shop.tax
        import shop.tax as taxes
        from shop import pricing


        def count():
            return shop.tax.rate() + taxes.rate() + pricing.price(1)


        class Item:
            def __init__(self, name):
                self.name = name
                self.check()

            def check(self):
                return len(self.name)

            def label(self):
                return self.check()

            @classmethod
            def make(cls):
                return cls("x")


        class Special(Item):
            def check(self):
                return super().check() + 1

            def describe(self):
                return self.label()


        class Plain:
            pass


        def build():
            item = Item("a")
            Special("b")
            Plain()
            return item.label()
    """,
    "src/shop/flow.py": """
        from shop import price, stock
        from shop.pricing import discount as cut


        def outer(values, callback):
            def inner(v):
                return cut(v)

            total = sum(inner(v) for v in values)
            callback(total)
            values.copy().clear()
            return price(total)


        def shadowed(price):
            return price(1)


        def conditional(flag):
            return helper()


        if stock:
            def helper():
                return 1
        else:
            helper = stock.count


        def decorate(function):
            return function


        @decorate
        def decorated():
            return stock.build()


        def make_class():
            class Local(stock.Special):
                def check(self):
                    return super(Local, self).check()

            return Local("c")
    """,
}

STATIC_EDGES = {
    ("shop.pricing:price", "shop.tax:rate"),
    ("shop.pricing:discount", "shop.pricing:price"),
    ("shop.stock:count", "shop.tax:rate"),
    ("shop.stock:count", "shop.pricing:price"),
    ("shop.stock:", "shop.stock:Item"),
    ("shop.stock:", "shop.stock:Special"),
    ("shop.stock:", "shop.stock:Plain"),
    ("shop.stock:Item.__init__", "shop.stock:Item.check"),
    ("shop.stock:Item.label", "shop.stock:Item.check"),
    ("shop.stock:Item.make", "shop.stock:Item.__init__"),
    ("shop.stock:Special.check", "shop.stock:Item.check"),
    ("shop.stock:Special.describe", "shop.stock:Item.label"),
    ("shop.stock:build", "shop.stock:Item.__init__"),
    ("shop.stock:build", "shop.stock:Item.label"),
    ("shop.flow:outer", "shop.flow:outer.<locals>.inner"),
    ("shop.flow:outer.<locals>.inner", "shop.pricing:discount"),
    ("shop.flow:outer", "shop.pricing:price"),
    ("shop.flow:", "shop.flow:decorate"),
    ("shop.flow:decorated", "shop.stock:build"),
    ("shop.flow:make_class", "shop.flow:make_class.<locals>.Local"),
    ("shop.flow:make_class", "shop.stock:Item.__init__"),
    ("shop.flow:make_class.<locals>.Local.check", "shop.stock:Special.check"),
}


@pytest.fixture
def store(tmp_path: Path):
    store = make_version(tmp_path, PROJECT, tests=())
    export_static_facts(store, 0)
    return store


def test_static_edges_follow_each_resolution_rule(store) -> None:
    data = validate_output(store.file(0, CALL_GRAPH))
    edges = {(e["caller"], e["callee"]) for e in data["edges"]}
    assert edges == STATIC_EDGES
    assert {e["kind"] for e in data["edges"]} == {"static"}
    lines = {(e["caller"], e["callee"]): e["lines"] for e in data["edges"]}
    assert lines["shop.stock:count", "shop.tax:rate"] == [7]
    assert lines["shop.stock:build", "shop.stock:Item.__init__"] == [39, 40]  # Item(...) and Special(...)
    assert lines["shop.flow:", "shop.flow:decorate"] == [34]


def test_unresolved_calls_are_counted_not_guessed(store) -> None:
    counts = validate_output(store.file(0, CALL_GRAPH))["callSites"]
    # callback(total) and price(1) call parameters, helper() has two bindings,
    # values.copy() and values.copy().clear() are methods of a parameter
    assert counts["unresolved"] == 5
    # len, sum, Plain() (no project __init__), @classmethod, super() twice
    assert counts["external"] == 6
    # one per call site behind the edges; Item(...)/Special(...) and both tax.rate() share an edge
    assert counts["resolved"] == 20
    assert counts["total"] == 31


def test_dynamic_edges_and_distance(store) -> None:
    graph = load_call_graph(store.file(0, CALL_GRAPH))
    added = add_dynamic_edges(graph, [
        ("shop.flow:shadowed", "shop.pricing:discount"),
        ("shop.pricing:discount", "shop.pricing:price"),
        ("shop.flow:shadowed", "shop.pricing:discount"),
        ("shop.flow:outer", "shop.flow:outer.<locals>.<lambda>"),
    ])
    assert added == 2
    assert graph.edges["shop.flow:shadowed", "shop.pricing:discount"]["kind"] == "dynamic"
    assert graph.edges["shop.pricing:discount", "shop.pricing:price"]["kind"] == "both"
    assert graph.nodes["shop.flow:outer.<locals>.<lambda>"]["kind"] is None
    assert call_distance(graph, "shop.flow:outer", "shop.tax:rate") == 2
    assert call_distance(graph, "shop.flow:shadowed", "shop.tax:rate") == 3
    assert call_distance(graph, "shop.tax:rate", "shop.flow:outer") is None
    assert call_distance(graph, "shop.tax:rate", "shop.tax:rate") == 0
    assert call_distance(graph, "shop.tax:nothing", "shop.tax:rate") is None


def test_saved_graph_round_trips_and_bad_files_are_one_line_errors(store, tmp_path: Path) -> None:
    graph = load_call_graph(store.file(0, CALL_GRAPH))
    assert graph.graph["callSites"] == CallSites(total=31, resolved=20, external=6, unresolved=5)
    copy = tmp_path / "callGraph.json"
    identifier = store.version(0).identifier
    call_graph_record(graph, identifier).write(copy)
    assert copy.read_bytes() == store.file(0, CALL_GRAPH).read_bytes()
    again = load_call_graph(copy)
    assert sorted(again.edges(data="lines")) == sorted(graph.edges(data="lines"))
    assert again.graph["callSites"] == graph.graph["callSites"]
    add_dynamic_edges(graph, [("shop.tax:rate", "shop.pricing:price")])
    call_graph_record(graph, identifier).write(copy)
    with pytest.raises(jsonschema.ValidationError, match="'dynamic' is not one of"):
        validate_output(copy)  # the stored graph is the static one: observed edges are added when it is read
    with pytest.raises(HistegError, match="does not match its schema: Invalid enum value 'dynamic'"):
        load_call_graph(copy)
    write_json(copy, {"schemaVersion": 1, "identifier": identifier, "nodes": [{"kind": "function"}], "edges": [], "callSites": {}})
    with pytest.raises(HistegError, match=r"does not match its schema: Object missing required field `id` - at `\$.nodes\[0\]`"):
        load_call_graph(copy)
    write_json(copy, [1, 2])
    with pytest.raises(HistegError, match="corrupt JSON in .*callGraph.json"):
        load_call_graph(copy)
