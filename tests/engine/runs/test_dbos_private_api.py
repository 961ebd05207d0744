"""The one place the runs use DBOS's private API (`durable.recovery._reenqueue_dead`) and the one private
name they import: these tests fail loudly when a DBOS upgrade moves or changes them."""

from __future__ import annotations

import inspect

import dbos


def test_the_system_database_calls_recovery_uses_exist_with_their_parameters():
    from dbos._dbos import _get_dbos_instance
    from dbos._sys_db import SystemDatabase

    assert callable(_get_dbos_instance)
    pending = inspect.signature(SystemDatabase.get_pending_workflows)
    assert list(pending.parameters) == ["self", "executor_id", "app_version"]
    reenqueue = inspect.signature(SystemDatabase.reenqueue_for_recovery)
    assert list(reenqueue.parameters) == [
        "self",
        "workflow_id",
        "executor_ids",
        "recovery_queue_name",
    ]
    # What the recovery reads off each pending workflow.
    from dbos._sys_db import GetPendingWorkflowsOutput

    assert "workflow_id" in inspect.signature(GetPendingWorkflowsOutput).parameters


def test_the_dbos_instance_holds_its_system_database_as_sys_db(run_home, project):
    from dbos._dbos import _get_dbos_instance

    from workrail_engine.runs import RunService

    service = RunService(project, allow_commands=True, home=run_home)
    service.start()
    try:
        assert hasattr(_get_dbos_instance()._sys_db, "reenqueue_for_recovery")
    finally:
        service.close()


def test_the_cancellation_dbos_catches_is_still_there():
    from dbos._error import DBOSWorkflowCancelledError

    assert issubclass(DBOSWorkflowCancelledError, BaseException)
    assert "DBOSPortableJSONSerializer" in dbos.__all__  # public: the serializer of the store
