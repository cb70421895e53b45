"""Every result of an MLflow search, page after page: ``search_model_versions`` stops at 10,000 results and
``search_experiments`` at 1,000 unless paged, and a decision taken on the first page alone (what gc or corpus
retention may delete) would miss what the later pages protect."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

PAGE_SIZE = 500


def paged(search: Callable[..., Any], **kwargs: Any) -> Iterator[Any]:
    """The items of every page ``search(**kwargs, max_results=..., page_token=...)`` returns (MLflow's
    ``PagedList``: a list with ``token``, None or empty on the last page)."""
    token = None
    while True:
        page = search(**kwargs, max_results=PAGE_SIZE, page_token=token) if token else \
            search(**kwargs, max_results=PAGE_SIZE)
        yield from page
        token = getattr(page, "token", None)
        if not token:
            return
