package core

// The catalogue of stable error codes. A code never changes meaning once
// released; clients match on codes, never on messages.
const (
	// Configuration and boot.
	CodeStoreNotConfigured     = "STORE_NOT_CONFIGURED"     // Config.Store is nil
	CodeTransportNotConfigured = "TRANSPORT_NOT_CONFIGURED" // a feature needs a transport that is missing
	CodeBlobStoreNotConfigured = "BLOB_STORE_NOT_CONFIGURED"
	CodeUnknownProvider        = "UNKNOWN_PROVIDER" // a model names an unregistered provider
	CodeMissingProvider        = "MISSING_PROVIDER"
	CodeInvalidPermission      = "INVALID_PERMISSION" // a permission selector does not parse
	CodeInvalidName            = "INVALID_NAME"       // an id or tool name breaks the naming rule
	CodeInvalidConfig          = "INVALID_CONFIG"     // a config file or option is malformed
	CodeToolNameCollision      = "TOOL_NAME_COLLISION"
	CodeNotStarted             = "NOT_STARTED"       // an Instance method called before Start
	CodeInstanceStopping       = "INSTANCE_STOPPING" // the instance is draining: retry on another replica
	CodeInstanceStopped        = "INSTANCE_STOPPED"  // Start on an instance Stop stopped: an instance runs once
	CodeAuthNotConfigured      = "AUTH_NOT_CONFIGURED"

	// Lookups.
	CodeAgentNotFound      = "AGENT_NOT_FOUND"
	CodePipelineNotFound   = "PIPELINE_NOT_FOUND"
	CodeTaskNotFound       = "TASK_NOT_FOUND"
	CodeToolNotFound       = "TOOL_NOT_FOUND"
	CodeCheckpointNotFound = "CHECKPOINT_NOT_FOUND"
	CodeCheckpointClaimed  = "CHECKPOINT_CLAIMED" // another resume holds it; retry once its claim lapses
	CodeSessionNotFound    = "SESSION_NOT_FOUND"
	CodeLoopNotFound       = "LOOP_NOT_FOUND"
	CodeTaskRunNotFound    = "TASK_RUN_NOT_FOUND"
	CodeRunNotFound        = "RUN_NOT_FOUND"
	CodeDocumentNotFound   = "DOCUMENT_NOT_FOUND"
	CodeEvalRunNotFound    = "EVAL_RUN_NOT_FOUND"
	CodeNotFound           = "NOT_FOUND"

	// Runs.
	CodeRunCancelled = "RUN_CANCELLED"
	CodeRunLost      = "RUN_LOST" // the replica running a run stopped heartbeating
	// CodeRunTaken: a store refused a write of a run under a RunFence the
	// run's record no longer holds (another instance took the run). The
	// engine stops such a run quietly; no client sees this code.
	CodeRunTaken         = "RUN_TAKEN"
	CodeConcurrencyLimit = "CONCURRENCY_LIMIT"
	CodeSessionBusy      = "SESSION_BUSY" // a run is already running on the session and the agent's policy is reject
	CodeValidationError  = "VALIDATION_ERROR"
	CodeAgentError       = "AGENT_ERROR"
	CodeToolError        = "TOOL_ERROR"
	// CodeToolEmitRefused: a tool emitted a crumb type that is the
	// engine's own, or emitted after it returned (see ToolEmitter).
	CodeToolEmitRefused  = "TOOL_EMIT_REFUSED"
	CodeTaskError        = "TASK_ERROR"
	CodeLoopError        = "LOOP_ERROR"
	CodeMaxRetries       = "MAX_RETRIES_EXCEEDED"
	CodeStepLimit        = "STEP_LIMIT"
	CodeOutputParseError = "OUTPUT_PARSE_ERROR"
	CodeRemoteAgentError = "REMOTE_AGENT_ERROR"
	CodeRemoteReconnect  = "REMOTE_AGENT_RECONNECT_FAILED"

	// Credentials.
	CodeCredentialNotDeclared = "CREDENTIAL_NOT_DECLARED"
	CodeInvalidCredentialName = "INVALID_CREDENTIAL_NAME"
	CodeInvalidVaultMount     = "INVALID_VAULT_MOUNT"
	CodeCredentialUnavailable = "CREDENTIAL_UNAVAILABLE"

	// Human in the loop and compositions.
	CodeSupervisorNotResumable = "SUPERVISOR_CHECKPOINT_NOT_RESUMABLE"
	CodeDelegationLimit        = "DELEGATION_LIMIT"
	CodeDelegateNotConfigured  = "DELEGATE_AGENT_NOT_CONFIGURED"
	CodeDelegationSuspended    = "DELEGATION_SUSPENDED"
	// CodeDelegationDepth: a supervisor's delegation or a loop's iteration
	// would nest deeper than the instance's maximum (engine
	// Config.MaxDelegationDepth, bread.yaml delegation.maxDepth, default 8).
	// It ends every run of the chain; no hook or retry recovers from it.
	CodeDelegationDepth         = "DELEGATION_DEPTH_EXCEEDED"
	CodeMixedSuspension         = "MIXED_SUSPENSION_UNSUPPORTED"
	CodePipelineStateLost       = "PIPELINE_STATE_LOST"
	CodeLoopAlreadyActive       = "LOOP_ALREADY_ACTIVE"
	CodeNoActiveLoop            = "NO_ACTIVE_LOOP"
	CodeLoopAgentNotInPool      = "LOOP_AGENT_NOT_IN_POOL"
	CodeStoreNoKnowledge        = "STORE_NO_KNOWLEDGE"
	CodeStoreNoDocuments        = "STORE_NO_DOCUMENTS"
	CodeSkillNotFound           = "SKILL_NOT_FOUND"
	CodeDecisionInvalid         = "DECISION_INVALID"
	CodeDeciderNotFound         = "DECIDER_NOT_FOUND"
	CodeHumanToolNotInteractive = "HUMAN_TOOL_NOT_INTERACTIVE"

	// Stores.
	CodeStoreUnavailable = "STORE_UNAVAILABLE" // the database cannot be reached
	CodeStoreClosed      = "STORE_CLOSED"
	CodeBusClosed        = "BUS_CLOSED"        // a Bus used after Close
	CodeQueueClosed      = "QUEUE_CLOSED"      // a Queue used after Stop
	CodeBlobStoreClosed  = "BLOB_STORE_CLOSED" // a Blobs used after Close
	CodeStoreError       = "STORE_ERROR"
	// CodeStoreSchemaTooNew: the database records a migration this release
	// does not know (a newer release migrated it); the store refuses it.
	CodeStoreSchemaTooNew = "STORE_SCHEMA_TOO_NEW"

	// Providers.
	CodeProviderAuth   = "PROVIDER_AUTH"
	CodeRateLimited    = "RATE_LIMITED"
	CodeContextTooLong = "CONTEXT_TOO_LONG"
	CodeProviderError  = "PROVIDER_ERROR"

	// Wire and HTTP.
	CodeProtocolDecodeError = "PROTOCOL_DECODE_ERROR"
	CodeBodyTooLarge        = "BODY_TOO_LARGE"
	CodeRequestTimeout      = "REQUEST_TIMEOUT" // a request body did not arrive within the server's deadline (408)
	CodeBadRequest          = "BAD_REQUEST"
	CodeUnauthorized        = "UNAUTHORIZED"
	CodeForbidden           = "FORBIDDEN"
	CodeNotImplemented      = "NOT_IMPLEMENTED"
	CodeInternalError       = "INTERNAL_ERROR"
	CodeAggregateError      = "AGGREGATE_ERROR"
)

// Sentinels for errors.Is. A *BreadError matches a sentinel with the same
// code, whatever its message.
var (
	ErrStoreNotConfigured = &BreadError{Code: CodeStoreNotConfigured}
	ErrNotStarted         = &BreadError{Code: CodeNotStarted}
	ErrAgentNotFound      = &BreadError{Code: CodeAgentNotFound}
	ErrPipelineNotFound   = &BreadError{Code: CodePipelineNotFound}
	ErrTaskNotFound       = &BreadError{Code: CodeTaskNotFound}
	ErrCheckpointNotFound = &BreadError{Code: CodeCheckpointNotFound}
	ErrCheckpointClaimed  = &BreadError{Code: CodeCheckpointClaimed}
	ErrSessionNotFound    = &BreadError{Code: CodeSessionNotFound}
	ErrLoopNotFound       = &BreadError{Code: CodeLoopNotFound}
	ErrTaskRunNotFound    = &BreadError{Code: CodeTaskRunNotFound}
	ErrRunNotFound        = &BreadError{Code: CodeRunNotFound}
	ErrDocumentNotFound   = &BreadError{Code: CodeDocumentNotFound}
	ErrEvalRunNotFound    = &BreadError{Code: CodeEvalRunNotFound}
	ErrNotFound           = &BreadError{Code: CodeNotFound}
	ErrRunCancelled       = &BreadError{Code: CodeRunCancelled}
	ErrRunTaken           = &BreadError{Code: CodeRunTaken}
	ErrSessionBusy        = &BreadError{Code: CodeSessionBusy}
	ErrValidation         = &BreadError{Code: CodeValidationError}
	ErrToolEmitRefused    = &BreadError{Code: CodeToolEmitRefused}
	ErrProtocolDecode     = &BreadError{Code: CodeProtocolDecodeError}
	ErrStoreUnavailable   = &BreadError{Code: CodeStoreUnavailable}
	ErrStoreClosed        = &BreadError{Code: CodeStoreClosed}
	ErrBusClosed          = &BreadError{Code: CodeBusClosed}
	ErrQueueClosed        = &BreadError{Code: CodeQueueClosed}
	ErrBlobStoreClosed    = &BreadError{Code: CodeBlobStoreClosed}
	// ErrNotImplemented matches the error of a call that needs an optional
	// capability the adapter lacks (see Storage).
	ErrNotImplemented         = &BreadError{Code: CodeNotImplemented}
	ErrBlobStoreNotConfigured = &BreadError{Code: CodeBlobStoreNotConfigured}
)
