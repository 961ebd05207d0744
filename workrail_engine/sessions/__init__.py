"""Sessions: durable runs whose prompt steps an agent answers, held in the run store.

How to use it (the MCP tools and the CLI are thin layers over exactly this)::

    from workrail_engine.sessions import SessionService, SessionTokenError
    from workrail_engine.answers.record import AnswerNotApplied

    sessions = SessionService()                  # the run store: WORKRAIL_HOME or WORKRAIL_DATABASE_URL
    step = sessions.start(catalog.served("bug-investigation"), goal="fix the flaky login test",
                          workspace="/abs/path/of/the/repo")
    step.pending            # {stepId, title, prompt, agentRole?} — None once complete
    step.continue_token     # "ct_…": answers this step attempt (or re-reads the session)
    step.checkpoint_token   # "ck_…": checkpoint() → a resume token "st_…"

    step = sessions.continue_session(step.continue_token, notes="## What I did …",
                                     artifacts=[...], context={"x": 1})
    step.outcome            # advanced | blocked (step.problems say what to send) | replayed
    sessions.continue_session(token)                       # a re-read (intent rehydrate)
    sessions.checkpoint(step.checkpoint_token)["resumeToken"]
    sessions.resume(workspace="/abs/repo", query="flaky login",   # {candidates ≤ 5, totalEligible}
                    same_workspace_only=True)              # only the sessions started in /abs/repo
    sessions.continue_session(resume_token, workspace="/abs/repo")  # re-read + recovery section;
                                                           # refused outside the session's workspace
    earlier = sessions.continue_session(first_token)       # a step passed since: that step,
    earlier.fork_of                                        # {runId, stepId, stepAttempt, …}
    branch = sessions.continue_session(earlier.continue_token, notes="…")  # a new session,
    branch.forked_from                                     # branched there: {runId, stepId, …}
    sessions.answer(run_id, attempt, notes=…)              # the same advance, by id + step attempt
    sessions.get(run_id) / sessions.list() / sessions.cancel(run_id)   # run-shaped views

Guarantees: an answer is applied exactly once per (session, step attempt) — the same answer again
returns the recorded response (``outcome == "replayed"``), another answer to an attempt already
answered raises `AnswerNotApplied` (``data.state`` is where the session is now); every answer
passes `step_checks.check_answer` (notes unless ``notesOptional``, validation criteria, output
contract, assessments) before the session moves; the workflow is pinned by its content hash at
start; tokens are signed with the store's key (`SessionTokenError`, ``data.reason``
TOKEN_INVALID_FORMAT | TOKEN_BAD_SIGNATURE | TOKEN_SCOPE_MISMATCH). docs/sessions.md has the rest.
"""

from typing import TYPE_CHECKING

from ..lazy_names import names_loaded_on_first_use

if TYPE_CHECKING:
    from .git_context import git_context
    from .service import SessionService, SessionStep, workflow_hash
    from .store import SessionStore
    from .tokens import SessionTokenError

# Each name loads its module on first use: the MCP server starts without the sessions engine
# and its run store, and loads them with the first session tool call.
_MODULE_OF = {
    "SessionService": "service",
    "SessionStep": "service",
    "workflow_hash": "service",
    "SessionStore": "store",
    "SessionTokenError": "tokens",
    "git_context": "git_context",
}

__getattr__ = names_loaded_on_first_use(__name__, _MODULE_OF)


__all__ = [
    "SessionService",
    "SessionStep",
    "SessionStore",
    "SessionTokenError",
    "git_context",
    "workflow_hash",
]
