"""Reading a form's body, refusing by name what aiohttp cannot read.

``request.post()`` raises whatever its parsers meet: a ``ValueError`` (a ``KeyError`` in older
aiohttp) for multipart without a boundary, a ``ValueError`` for a body that is not the multipart
it claims, a ``LookupError`` for an unknown charset, a ``RequestPayloadError`` for a body falsely
marked ``Content-Encoding: gzip``. Each was a 500 before anyone signed in; here each is an
``InvalidInputError`` naming the header or the body, which the page answers 400. The body
itself is never quoted.
"""

from __future__ import annotations

from typing import Final

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from multidict import MultiDictProxy

from shared.errors import InvalidInputError

# How much of a header value a refusal quotes: enough to recognise, nothing more.
_QUOTED_CHARS: Final = 40


def _quoted(value: str | None) -> str:
    return ascii((value or "")[:_QUOTED_CHARS])


def _parameters(request: web.BaseRequest) -> str:
    return request.headers.get("Content-Type", "").partition(";")[2].lower()


async def read_form(
    request: web.BaseRequest,
) -> MultiDictProxy[str | bytes | bytearray | web.FileField]:
    """The request's form fields (read once; aiohttp keeps them for the next caller).

    Raises:
        InvalidInputError: the body cannot be read as the form its headers describe.
        web.HTTPRequestEntityTooLarge: the body is over the page's limit.
    """
    content_type = request.content_type
    try:
        return await request.post()
    except LookupError as error:
        raise InvalidInputError(
            "Content-Type",
            f"Content-Type charset {_quoted(request.charset)} is not a known character set",
        ) from error
    except UnicodeDecodeError as error:
        raise InvalidInputError(
            "body", f"the form body is not valid {request.charset or 'UTF-8'} text"
        ) from error
    except (HttpProcessingError, web.RequestPayloadError) as error:
        encoding = request.headers.get("Content-Encoding")
        if encoding is not None:
            raise InvalidInputError(
                "Content-Encoding",
                f"Content-Encoding {_quoted(encoding)}: the body could not be decoded with it",
            ) from error
        raise InvalidInputError("body", "the form body could not be read") from error
    except (KeyError, ValueError) as error:
        if content_type.startswith("multipart/") and "boundary=" not in _parameters(request):
            raise InvalidInputError(
                "Content-Type",
                f"Content-Type {content_type} has no boundary parameter: the form cannot be read",
            ) from error
        raise InvalidInputError(
            "body", f"the form body is not valid {content_type}: it cannot be read"
        ) from error
