"""The non-sandbox half of `cruxtui doctor`: where the files are, which endpoints answer."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def locations(dataset: str | None, offline: bool) -> dict[str, str]:
    """Where the dataset, config, cases and run store are (or would be), as text."""
    from cruxtui.core.cases.case_file import cases_dir
    from cruxtui.core.data.dataset import DatasetError, load_dataset
    from cruxtui.core.models.endpoints import config_path
    from cruxtui.core.runs.store import default_store_path

    try:
        described = load_dataset(dataset, offline=offline or None).description
    except DatasetError as exc:
        described = f"unusable: {exc}"
    config = config_path()
    return {
        "dataset": described,
        "config": f"{config}" + ("" if config.exists() else " (absent)"),
        "cases": str(cases_dir().resolve()),
        "run store": str(default_store_path()),
    }


def endpoints_status(timeout: float) -> list[dict[str, Any]]:
    """Each configured endpoint: its URL and whether `GET /models` answered within `timeout`."""
    from cruxtui.core.models import ModelError
    from cruxtui.core.models.endpoints import load_endpoints, resolve_endpoint

    try:
        tables, _default = load_endpoints()
    except ModelError as exc:
        return [{"name": "config", "url": None, "status": f"unreadable: {exc.message}"}]
    found = []
    for name in tables:
        try:
            endpoint = resolve_endpoint(name)
        except ModelError as exc:
            found.append({"name": name, "url": None, "status": f"not usable: {exc.message}"})
            continue
        url = endpoint.spec.base_url
        if endpoint.spec.backend != "openai" or not url:
            found.append({"name": name, "url": url, "status": f"{endpoint.spec.backend} (local)"})
            continue
        found.append({"name": name, "url": url, "status": _ask(url, endpoint.api_key, timeout)})
    return found


def _ask(base_url: str, key: str | None, timeout: float) -> str:
    request = urllib.request.Request(base_url.rstrip("/") + "/models")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            body = response.read(1 << 20)
    except urllib.error.HTTPError as exc:
        return f"answers, HTTP {exc.code}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"does not answer ({reason})"
    try:
        models = [m.get("id") for m in json.loads(body).get("data", [])]
    except (ValueError, AttributeError, TypeError):
        return "answers (not an OpenAI model list)"
    return f"answers: {len(models)} model(s)" + (f", e.g. {models[0]}" if models else "")
