"""These tests run on real stores: every backend fixture of the storage contract suites,
imported whole so that a backend added there (its ``BACKENDS`` list) runs here too."""

from tests.storage.conftest import *  # noqa: F403  (fixtures are registered by name)
