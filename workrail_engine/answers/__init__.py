"""Answering a waiting step: the one path a run's and a session's answers both take.

- `record`: the answer masked, its digest, the answer recorded before it (a replay, or another
  answer applied first: `AnswerNotApplied`), and what a step's result shows of its answer.
- `verdict`: `judge` — the step's checks, then a person's confirmation where the step asks one.
- `blockers`: why an answer was sent back, one shape for runs and sessions.
- `confirmation`: asking a person, and what a refusal answers.
- `store`: the answers, refusals and model-usage tables (`AnswerStore`), in the run store.
- `model_loop`: a step answered by the client's model through the same path, bounded.

What follows acceptance is the services' own: a session moves to its next step
(`sessions.service`), a run is sent the answer (`runs.service`, `runs.answer_delivery`).
Neither package imports the other's answering; both import this one.
"""
