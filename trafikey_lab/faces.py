"""A package face whose names load from their modules the first time they are asked for (PEP
562): the top package's and live/'s, so that importing either loads no redis, no server kind
and no plotting library until a name that needs one is used."""

import sys
from collections.abc import Callable
from importlib import import_module


def lazy(package: str, homes: dict[str, str]) -> tuple[Callable[[str], object],
                                                      Callable[[], list[str]]]:
    """The package's `__getattr__` and `__dir__`: each name of `homes` is taken from the module
    it names on first use and kept in the package's globals, so later lookups skip this."""

    def __getattr__(name: str) -> object:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(homes[name]), name)
        vars(sys.modules[package])[name] = value  # asked once: later lookups find it directly
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(homes))

    return __getattr__, __dir__
