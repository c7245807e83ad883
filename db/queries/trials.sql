-- name: CreateTrial :one
INSERT INTO trials (experiment_id, request_id, state, hparams, seed)
VALUES ($1, $2, $3, $4, $5)
RETURNING *;

-- name: GetTrial :one
SELECT * FROM trials WHERE id = $1;

-- name: GetTrialByRequest :one
SELECT * FROM trials WHERE experiment_id = $1 AND request_id = $2;

-- name: ListTrials :many
SELECT * FROM trials WHERE experiment_id = $1 ORDER BY id;

-- name: SetTrialState :exec
UPDATE trials SET state = $2,
  ended_at = CASE WHEN $2 IN ('COMPLETED', 'CANCELED', 'ERROR') THEN now() ELSE NULL END
WHERE id = $1;

-- name: StartTrialRun :one
-- A new allocation for the trial: the next run id.
UPDATE trials SET run_id = run_id + 1 WHERE id = $1 RETURNING run_id;

-- name: AddTrialRestart :exec
UPDATE trials SET restarts = restarts + 1 WHERE id = $1;

-- name: SetTrialProgress :exec
UPDATE trials SET progress = $2 WHERE id = $1;

-- name: SetTrialEarlyExit :exec
UPDATE trials SET early_exit = $2 WHERE id = $1;

-- name: SetTrialRunnerState :exec
UPDATE trials SET runner_state = $2 WHERE id = $1;

-- name: SetTrialCheckpoint :exec
UPDATE trials SET latest_checkpoint = $2 WHERE id = $1;

-- name: SetTrialSteps :exec
UPDATE trials SET steps_completed = GREATEST(steps_completed, $2) WHERE id = $1;

-- name: SetTrialBestValidation :exec
UPDATE trials SET best_validation = $2 WHERE id = $1;
