"""The S3 servers for the backend-specific tests (the contract suites get them from
tests/storage/conftest.py)."""

from tests.fakes.aws import (  # noqa: F401  (fixtures, registered by import)
    make_s3_environ,
    moto_s3_url,
    s3_environ,
    s3vectors_fake,
    s3vectors_server,
)
