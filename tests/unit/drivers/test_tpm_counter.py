"""The TPM counter (drivers/counter.py) against a real software TPM 2.0 (swtpm)."""

from __future__ import annotations

import threading

import pytest

from drivers.counter import CounterError, TpmCounter, open_counter
from tests.services.swtpm import SwTpm


def test_the_counter_starts_at_zero_and_counts_up_by_one(swtpm_tpm: SwTpm) -> None:
    counter = TpmCounter(swtpm_tpm.tcti)
    assert counter.read() == 0  # defined on first use, never incremented
    assert [counter.increment() for _ in range(3)] == [1, 2, 3]
    assert counter.read() == 3


def test_the_value_survives_a_restart_of_the_tpm(swtpm_tpm: SwTpm) -> None:
    TpmCounter(swtpm_tpm.tcti).increment()
    TpmCounter(swtpm_tpm.tcti).increment()
    swtpm_tpm.stop()
    swtpm_tpm.start()
    assert TpmCounter(swtpm_tpm.tcti).read() == 2  # a fresh process reads what is in NV


def test_two_indexes_are_two_counters(swtpm_tpm: SwTpm) -> None:
    a, b = TpmCounter(swtpm_tpm.tcti, 0x01500016), TpmCounter(swtpm_tpm.tcti, 0x01500017)
    a.increment()
    a.increment()
    assert (a.read(), b.read()) == (2, 0)


def test_threads_never_get_the_same_value(swtpm_tpm: SwTpm) -> None:
    counter = TpmCounter(swtpm_tpm.tcti)
    got: list[int] = []
    lock = threading.Lock()

    def bump() -> None:
        for _ in range(4):
            v = counter.increment()
            with lock:
                got.append(v)

    threads = [threading.Thread(target=bump) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(got) == list(range(1, 13))


def test_a_tpm_that_is_gone_is_a_clear_error(swtpm_tpm: SwTpm) -> None:
    counter = TpmCounter(swtpm_tpm.tcti, timeout_s=5.0)
    counter.read()
    swtpm_tpm.stop()
    with pytest.raises(CounterError, match="TPM swtpm:host=127.0.0.1"):
        counter.increment()


def test_none_means_no_counter() -> None:
    assert open_counter("none") is None
    assert open_counter(" None ") is None
    counter = open_counter("device:/dev/tpmrm0")
    assert isinstance(counter, TpmCounter) and counter.tcti == "device:/dev/tpmrm0"
