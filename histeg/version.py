"""histeg's version, in a leaf module: outputs and fingerprints record it, and no module that does should have to
import the package's public API to read it."""

__version__ = "0.1.0"
