"""Values each function reads, one access path at a time, on a real source tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from histeg.records.history import VersionSettings
from histeg.statics.functions import read_function_table
from histeg.statics.reads import FunctionReads, ValueReads, value_reads
from tests.statics.versions import make_version

PROJECT = {
    "src/shop/__init__.py": """
        from .settings import LIMIT
    """,
    "src/shop/settings.py": """
        LIMIT = 10
        RATE = 2
        _HIDDEN = 3


        class Locale:
            NAMES = {"red": "rouge"}


        class Palette:
            COLOURS = {"red": "#f00"}

            def __init__(self, name):
                self.name = name


        class Swatch:
            COLOURS = ("red",)

            def show(self):
                return self.COLOURS


        class Base:
            UNIT = "cm"

            def describe(self):
                return self.TEMPLATE + self.UNIT

            @classmethod
            def unit(cls):
                return cls.UNIT


        class Child(Base):
            TEMPLATE = "child"


        DEFAULT = Locale()
    """,
    "src/shop/stars.py": """
        from shop.settings import *
    """,
    "src/shop/use.py": """
        import shop.settings
        import shop.settings as cfg
        from shop import settings, LIMIT as CAP
        from shop.settings import RATE, Base, Locale, Palette
        from shop.stars import RATE as STARRED


        def by_module():
            return settings.LIMIT + cfg.RATE + shop.settings._HIDDEN


        def by_name():
            return CAP + RATE + STARRED


        def shadowed(RATE):
            return RATE + [CAP for CAP in range(RATE)][0]


        def by_class():
            return Locale.NAMES["red"] + settings.DEFAULT.NAMES["red"]


        class Translator:
            def __init__(self):
                self.locale = Locale()

            def name(self, key):
                return self.locale.NAMES[key]


        class Annotated:
            def __init__(self, locale: Locale):
                self.locale = locale

            def name(self, key):
                return self.locale.NAMES[key]


        class Loose:
            def __init__(self, palette):
                self.palette = palette

            def colour(self, key):
                return self.palette.COLOURS[key]


        def through_parameter(thing, key):
            return thing.COLOURS[key] + thing.name


        class Metric(Base):
            def length(self):
                return self.UNIT + super().describe()
    """,
}


@pytest.fixture(scope="module")
def reads(tmp_path_factory: pytest.TempPathFactory) -> ValueReads:
    store = make_version(tmp_path_factory.mktemp("reads"), PROJECT, tests=())
    return value_reads(read_function_table(store.snapshot(0), VersionSettings(["src"], [])))


def test_module_globals_by_module_attribute_and_by_imported_name(reads: ValueReads) -> None:
    assert reads["shop.use:by_module"].resolved == {
        "shop.settings:LIMIT": "attribute", "shop.settings:RATE": "attribute", "shop.settings:_HIDDEN": "attribute",
    }
    # an alias of a re-export of the package, an imported name, a name imported from a star import
    assert set(reads["shop.use:by_name"].resolved) == {"shop.settings:LIMIT", "shop.settings:RATE"}
    assert reads["shop.use:by_name"].resolved["shop.settings:RATE"] == "name"


def test_parameters_and_comprehension_targets_shadow_globals(reads: ValueReads) -> None:
    assert reads["shop.use:shadowed"] == FunctionReads()


def test_class_attributes_by_class_self_cls_and_project_bases(reads: ValueReads) -> None:
    assert set(reads["shop.use:by_class"].resolved) == {"shop.settings:Locale.NAMES", "shop.settings:DEFAULT"}
    assert reads["shop.settings:Swatch.show"].resolved == {"shop.settings:Swatch.COLOURS": "attribute"}
    assert set(reads["shop.settings:Base.unit"].resolved) == {"shop.settings:Base.UNIT"}
    assert set(reads["shop.use:Metric.length"].resolved) == {"shop.settings:Base.UNIT"}


def test_instance_held_in_an_attribute(reads: ValueReads) -> None:
    """``self.locale.NAMES``: the class's methods assign ``self.locale`` a ``Locale`` (made there, or an annotated parameter)."""
    assert reads["shop.use:Translator.name"].resolved == {"shop.settings:Locale.NAMES": "instance attribute"}
    assert reads["shop.use:Annotated.name"].resolved == {"shop.settings:Locale.NAMES": "instance attribute"}
    assert reads["shop.use:Translator.name"].candidates == {}


def test_unknown_receivers_are_candidates_of_every_class_holding_the_value(reads: ValueReads) -> None:
    loose = reads["shop.use:Loose.colour"]
    assert loose.resolved == {}
    assert loose.candidates == {
        "shop.settings:Palette.COLOURS": frozenset({"shop.settings:Palette.__init__"}),
        "shop.settings:Swatch.COLOURS": frozenset({"shop.settings:Swatch.show"}),
    }
    assert reads["shop.use:through_parameter"].candidates == loose.candidates  # ``thing.name`` is an instance attribute, no value
    assert loose.values() == set()
    assert loose.values({"shop.settings:Palette.__init__", "shop.use:Loose.colour"}) == {"shop.settings:Palette.COLOURS"}


def test_self_in_a_base_class_reads_what_its_subclasses_define(reads: ValueReads) -> None:
    """``self.TEMPLATE`` in ``Base``: only subclasses of ``Base`` qualify; ``Child`` only overrides data, so the methods it inherits witness it."""
    describe = reads["shop.settings:Base.describe"]
    assert describe.resolved == {"shop.settings:Base.UNIT": "attribute"}
    witnesses = frozenset({"shop.settings:Base.describe", "shop.settings:Base.unit"})
    assert describe.candidates == {"shop.settings:Child.TEMPLATE": witnesses}


def test_module_body_reads_and_methods_are_no_values(reads: ValueReads, tmp_path: Path) -> None:
    assert reads["shop.settings:"].resolved == {}  # ``DEFAULT = Locale()`` calls a class, reads no value
    store = make_version(tmp_path, {"src/app.py": """
        class Shop:
            OPEN = True

            def check(self):
                return self.helper() and self.OPEN

            def helper(self):
                return 1
    """}, tests=())
    found = value_reads(read_function_table(store.snapshot(0), VersionSettings(["src"], [])))
    assert found["app:Shop.check"] == FunctionReads({"app:Shop.OPEN": "attribute"})
