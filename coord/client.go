package coord

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// TokenEnv is the environment variable that holds the coordinator's token
// for knee coordinate, knee run --coordinator and knee k8s fetch (in a
// cluster, from the test's Secret).
const TokenEnv = "KNEE_COORDINATOR_TOKEN"

// Client is one runner's side of the protocol.
type Client struct {
	URL    string // the coordinator, e.g. http://checkout-coord:7070
	Token  string // "" when the coordinator asks for none (loopback)
	Index  int    // the runner's --execution-segment-index
	Runner string // its name, for the coordinator's messages
	HTTP   *http.Client
	Log    io.Writer // retries are told here; nil for none

	watch io.ReadCloser
}

// permanent is an answer that trying again cannot change.
type permanent struct{ error }

func (c *Client) client() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "knee: coordinator: "+format+"\n", args...)
	}
}

// do sends one request to the coordinator, with header and the token.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body io.Reader, header http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.URL, "/")+path+"?"+q.Encode(), body)
	if err != nil {
		return nil, permanent{fmt.Errorf("--coordinator %q: %w", c.URL, err)}
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return c.client().Do(req)
}

// answer turns a reply that is not 200 into an error, permanent unless
// the coordinator may answer otherwise later.
func answer(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	err := fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout {
		return err
	}
	return permanent{err}
}

// retry calls try until it succeeds, fails permanently, ctx ends or
// attempts (0: no limit) are spent, waiting 250 ms, 500 ms, ... 5 s between.
func (c *Client) retry(ctx context.Context, what string, attempts int, try func() error) error {
	wait := 250 * time.Millisecond
	for n := 1; ; n++ {
		err := try()
		var p permanent
		if err == nil || errors.As(err, &p) {
			if p.error != nil {
				return p.error
			}
			return err
		}
		if attempts > 0 && n >= attempts {
			return fmt.Errorf("%s: %d attempts failed, the last: %w", what, n, err)
		}
		c.logf("%s (attempt %d): %v; trying again in %v", what, n, err, wait)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: interrupted after %d attempts, the last: %w", what, n, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// Ready reports the runner ready and waits for the release: the instant
// every runner is ready. It returns the coordinator's clock at the release.
// The request stays open until Close, so the coordinator sees this runner
// go if it dies. A coordinator not up yet is waited for, until ctx ends.
func (c *Client) Ready(ctx context.Context) (time.Time, error) {
	q := url.Values{"index": {strconv.Itoa(c.Index)}, "runner": {c.Runner}}
	var rel releaseMsg
	err := c.retry(ctx, "reporting ready", 0, func() error {
		resp, err := c.do(ctx, http.MethodPost, ReadyPath, q, nil, nil)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return answer(resp)
		}
		line, err := bufio.NewReader(resp.Body).ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(line, &rel)
		}
		if err != nil {
			resp.Body.Close()
			return fmt.Errorf("reading the release: %w", err)
		}
		// Kept open, read to its end: the coordinator's heartbeats.
		c.watch = resp.Body
		go io.Copy(io.Discard, resp.Body)
		return nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("coordinator %s: %w", c.URL, err)
	}
	return rel.Release, nil
}

// Send uploads the run directory dir as this runner's part: a tar stream
// packed as it is sent (memory stays bounded), its SHA-256 announced
// first, tried again on failure with backoff.
func (c *Client) Send(ctx context.Context, dir string) error {
	sum, err := Digest(dir)
	if err != nil {
		return err
	}
	q := url.Values{"index": {strconv.Itoa(c.Index)}, "runner": {c.Runner}}
	err = c.retry(ctx, "sending the part", 10, func() error {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(Pack(pw, dir)) }()
		defer pr.Close()
		resp, err := c.do(ctx, http.MethodPut, PartPath, q, pr, http.Header{DigestHeader: {sum}, "Content-Type": {"application/x-tar"}})
		if err != nil {
			return err
		}
		if resp.StatusCode == http.StatusBadRequest {
			err := answer(resp) // a damaged stream: worth another try
			return err.(permanent).error
		}
		if resp.StatusCode != http.StatusOK {
			return answer(resp)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil
	})
	if err != nil {
		return fmt.Errorf("coordinator %s: %w", c.URL, err)
	}
	return nil
}

// Close ends the ready request: the part is in, or the runner gives up.
func (c *Client) Close() {
	if c.watch != nil {
		c.watch.Close()
	}
}

// Fetch downloads the coordinator's result into out (which must not
// exist), waiting while the test runs, until ctx ends. It returns the
// coordinator's exit code for the test and its message.
func Fetch(ctx context.Context, base, token, out string, hc *http.Client, log io.Writer) (int, string, error) {
	if _, err := os.Stat(out); err == nil {
		return 0, "", permanent{fmt.Errorf("--out %s exists; choose a new directory", out)}
	}
	c := &Client{URL: base, Token: token, HTTP: hc}
	var exit int
	var msg, waiting string
	err := c.retry(ctx, "fetching the result", 0, func() error {
		resp, err := c.do(ctx, http.MethodGet, ResultPath, nil, nil, nil)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			err := answer(resp)
			if log != nil && err.Error() != waiting { // each new state once, not every poll
				waiting = err.Error()
				fmt.Fprintf(log, "knee: coordinator %s: %s\n", base, strings.TrimPrefix(waiting, "503 Service Unavailable: "))
			}
			return err
		}
		defer resp.Body.Close()
		want := resp.Header.Get(DigestHeader)
		exit, _ = strconv.Atoi(resp.Header.Get(ExitHeader))
		msg = resp.Header.Get(MessageHeader)
		tmp := out + ".part"
		os.RemoveAll(tmp)
		if err := os.MkdirAll(tmp, 0o755); err != nil { // makes out's parent too
			return permanent{err}
		}
		defer os.RemoveAll(tmp)
		if err := receive(resp.Body, want, out, tmp); err != nil {
			os.RemoveAll(out)
			return err
		}
		return nil
	})
	return exit, msg, err
}
