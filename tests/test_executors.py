"""What the executors answer about a lease beyond the verbs' replies, on the model and the module.

Each test runs twice through the `executor` fixture: once on the model, once on a real
valkey-server with the module loaded.
"""

from trafikey_lab.epoch import NOW, ZERO

FAR = 10**9
"""A lease long enough never to run out during a test."""


def test_a_claimed_lease_is_stamped_by_the_process_that_granted_it_and_no_other(executor, queue):
    executor.add(queue, "job-1")
    executor.claim(queue, FAR)
    here = executor.run_id
    assert executor.stamped_by(queue, "job-1", here)
    assert executor.stamped_by(queue, "job-1", here.encode())
    others = {NOW, ZERO, here.upper().encode(), here[:39].encode(), b""} - {here.encode()}
    assert not any(executor.stamped_by(queue, "job-1", other) for other in others)


def test_after_a_restart_the_stamp_names_the_old_process_until_an_extension(executor, queue):
    executor.add(queue, "job-1")
    executor.add(queue, "job-2")
    executor.claim(queue, FAR)
    executor.claim(queue, FAR)
    old = executor.run_id
    new = executor.restart()
    assert new != old
    for job in ("job-1", "job-2"):
        assert executor.stamped_by(queue, job, old) and not executor.stamped_by(queue, job, new)
    assert executor.extend(queue, "job-1", 1, FAR) == 1
    assert executor.stamped_by(queue, "job-1", new) and not executor.stamped_by(queue, "job-1", old)
    assert executor.stamped_by(queue, "job-2", old), "an extension restamps only its own lease"


def test_a_scripted_lease_or_a_missing_row_is_stamped_by_no_process(executor, queue):
    executor.add(queue, "job-1")
    executor.scripted_claim(queue, FAR)
    assert not executor.stamped_by(queue, "job-1", executor.run_id)
    assert not executor.stamped_by(queue, "no-such-job", executor.run_id)
