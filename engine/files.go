package engine

import (
	"bytes"
	"context"

	"github.com/breadai/bread/core"
)

// storeFile keeps a file the model generated in the BlobStore and announces
// it with file:generated; the run's agent:run:end lists it. Without a blob
// store the run fails with BLOB_STORE_NOT_CONFIGURED, at the moment a file
// actually arrives.
func (r *run) storeFile(ctx context.Context, f *core.GeneratedFile) error {
	if !r.in.blobs.Configured() {
		return &core.BreadError{
			Code:    core.CodeBlobStoreNotConfigured,
			Message: "agent " + r.agent.ID + "'s model generated a file but no BlobStore is configured (Config.BlobStore)",
			Context: map[string]any{"agentId": r.agent.ID, "runId": r.id, "mimeType": f.MediaType},
		}
	}
	ref, err := r.in.blobs.Put(ctx, bytes.NewReader(f.Data), f.MediaType)
	if err != nil {
		return core.Errorf(core.CodeAgentError, "storing a generated file failed: %w", err)
	}
	r.files = append(r.files, core.FileOutput{URI: ref.URL, MimeType: f.MediaType, Name: f.Name})
	if !r.emit(&core.FileGenerated{CrumbBase: r.base(), URI: ref.URL, MimeType: f.MediaType, Name: f.Name}) {
		return errConsumerGone
	}
	return nil
}
