"""numba's cache of dpcluster's own kernels is keyed by the compiled sources' content, so
two checkouts of one commit on a machine share it (dpcluster/cache.py)."""

from __future__ import annotations

from pathlib import Path

from numba.core import caching, config

import dpcluster.kernels  # noqa: F401 - installs the locator before its first @njit
from dpcluster import cache


def locator():
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    first = impl._locator_classes[0]
    assert getattr(first, "dpcluster", False), "dpcluster's locator comes first"
    return first


def test_a_kernel_is_cached_under_its_sources_content_not_its_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))  # as dpcluster sets it
    from dpcluster.kernels import grid

    loc = locator()
    path = Path(grid.__file__)
    assert loc.get_suitable_cache_subpath(str(path)) == f"dpcluster_kernels_{cache._install_key()}"
    assert str(path.parent) not in loc.get_suitable_cache_subpath(str(path))
    found = loc.from_function(grid.grid_counts.py_func, str(path))
    assert found is not None
    assert found.get_cache_path().startswith(config.CACHE_DIR)


def test_code_outside_the_package_keeps_numbas_locators(tmp_path):
    outside = tmp_path / "user_kernel.py"
    outside.write_text("def f():\n    return 1\n")
    namespace: dict = {}
    exec(compile(outside.read_text(), str(outside), "exec"), namespace)
    assert locator().from_function(namespace["f"], str(outside)) is None


def test_installing_twice_adds_one_locator():
    cache.share_numba_cache()
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    assert sum(getattr(c, "dpcluster", False) for c in impl._locator_classes) == 1
