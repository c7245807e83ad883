package client

import (
	"context"
	"net/url"

	"github.com/resolute-ml/resolute"
)

// Templates lists configuration templates.
func (c *Client) Templates(ctx context.Context) ([]resolute.Template, error) {
	var out resolute.TemplatesResponse
	err := c.do(ctx, "GET", "/api/v1/templates", nil, nil, &out)
	return out.Templates, err
}

// Template returns the template called name.
func (c *Client) Template(ctx context.Context, name string) (resolute.Template, error) {
	var out resolute.TemplateResponse
	err := c.do(ctx, "GET", "/api/v1/templates/"+url.PathEscape(name), nil, nil, &out)
	return out.Template, err
}

// CreateTemplate stores a new template from its YAML; it fails with
// conflict when the name is taken.
func (c *Client) CreateTemplate(ctx context.Context, name, yamlText string, workspaceID int64) (resolute.Template, error) {
	var out resolute.TemplateResponse
	err := c.do(ctx, "POST", "/api/v1/templates", nil, resolute.TemplateRequest{Name: name, YAML: yamlText, WorkspaceID: workspaceID}, &out)
	return out.Template, err
}

// SetTemplate creates the template or replaces its YAML.
func (c *Client) SetTemplate(ctx context.Context, name, yamlText string) (resolute.Template, error) {
	var out resolute.TemplateResponse
	err := c.do(ctx, "PUT", "/api/v1/templates/"+url.PathEscape(name), nil, resolute.TemplateRequest{YAML: yamlText}, &out)
	return out.Template, err
}

// DeleteTemplate removes a template.
func (c *Client) DeleteTemplate(ctx context.Context, name string) error {
	return c.do(ctx, "DELETE", "/api/v1/templates/"+url.PathEscape(name), nil, nil, nil)
}

// PreviewSearch returns the searcher's plan for a config, or every error in it.
func (c *Client) PreviewSearch(ctx context.Context, req resolute.ExperimentConfigRequest) (resolute.PreviewResponse, error) {
	var out resolute.PreviewResponse
	err := c.do(ctx, "POST", "/api/v1/preview-hp-search", nil, req, &out)
	return out, err
}

// ValidateExperiment expands and checks a config without creating anything.
func (c *Client) ValidateExperiment(ctx context.Context, req resolute.ExperimentConfigRequest) (resolute.ValidateResponse, error) {
	var out resolute.ValidateResponse
	req.ValidateOnly = true
	err := c.do(ctx, "POST", "/api/v1/experiments", nil, req, &out)
	return out, err
}
