"""The demo service over real HTTP: a repeated Idempotency-Key gets the first answer and acts once."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
from walkback.agent.demo_service import DemoService


def post(svc: DemoService, path: str, key: str | None, body: object) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return httpx.post(svc.url + path, json=body, headers=headers, timeout=10)


def test_a_repeated_key_returns_the_first_response_and_does_not_act_twice(service: DemoService) -> None:
    first = post(service, "/releases", "run1:7", {"v": "1.0"})
    again = post(service, "/releases", "run1:7", {"v": "1.0"})
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json() == {"id": 1, "path": "/releases", "received": {"v": "1.0"}}
    assert "Idempotent-Replayed" not in first.headers and again.headers["Idempotent-Replayed"] == "true"
    assert [c["effect"] for c in service.calls()] == [True, False]
    assert service.effects_by_key() == {"run1:7": 1}


def test_different_keys_and_keyless_calls_each_act(service: DemoService) -> None:
    post(service, "/a", "k1", 1)
    post(service, "/a", "k2", 1)
    post(service, "/a", None, 1)
    post(service, "/a", None, 1)
    assert service.effects_by_key() == {"k1": 1, "k2": 1, None: 2}
    assert httpx.get(service.url + "/").json() == {"effects": 4}


def test_concurrent_calls_with_one_key_act_once(service: DemoService) -> None:
    answers: list[int] = []
    threads = [
        threading.Thread(target=lambda: answers.append(post(service, "/p", "same", {}).json()["id"]))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [1] * 8
    assert service.effects_by_key() == {"same": 1}
    assert len(service.calls()) == 8


def test_a_restarted_service_still_honours_old_keys(tmp_path: Path) -> None:
    svc = DemoService(tmp_path / "s")
    svc.start()
    assert post(svc, "/r", "k", {"x": 1}).json()["id"] == 1
    svc.stop()
    svc2 = DemoService(tmp_path / "s")
    svc2.start()
    try:
        again = post(svc2, "/r", "k", {"x": 1})
        fresh = post(svc2, "/r", "k2", {"x": 1})
    finally:
        svc2.stop()
    assert again.json()["id"] == 1 and again.headers["Idempotent-Replayed"] == "true"
    assert fresh.json()["id"] == 2
    assert svc2.effects_by_key() == {"k": 1, "k2": 1}


def test_status_paths_answer_without_acting(service: DemoService) -> None:
    assert post(service, "/status/503", "k", {}).status_code == 503
    assert service.effects_by_key() == {}
