package core

import "context"

// Placeholders until the HITL and pipeline work lands.
func (in *Instance) resume(ctx context.Context, e *emitter, checkpointID string, response any) error {
	return &BreadError{Code: CodeNotImplemented, Message: "resume is not implemented yet"}
}

func (in *Instance) runPipeline(ctx context.Context, e *emitter, pipelineID string, input any) error {
	if _, ok := in.cfg.Pipelines[pipelineID]; !ok {
		return &BreadError{Code: CodePipelineNotFound, Message: "pipeline " + quoteTruncated(pipelineID) + " not found"}
	}
	return &BreadError{Code: CodeNotImplemented, Message: "pipelines are not implemented yet"}
}
