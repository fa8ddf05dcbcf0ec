package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/remote"
	"github.com/pkuinfo/harness/update"
	"github.com/spf13/cobra"
)

func init() { register(45, newListCmd) }

func newListCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List installed documents: trust, hash, pending updates, problems",
		Long: `list prints the installed documents with their version, trust, content hash and
link, and any pending update, last update error or quarantine; then the bundled
official documents that harness update updated from their links (the version
in use and the bundled one) or holds an update for. Stored files are
verified against their hash; a plugin whose files changed is quarantined (and
shown so) while the others keep working. The standing grants (harness grants)
follow the documents. --json prints an array of the state entries, each with
"problem" when it cannot be used, the document's "icon" and "maxAgentSteps" when it
declares them, and "grants", its tools' standing grants
("stale": true when the content or trust in use is no longer the granted one); a
bundled document's has "bundled": true, "updated", "bundledVersion" and
"bundledHash".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := openStore(app)
			if err != nil {
				return err
			}
			list, err := store.LoadInstalled(cmd.Context())
			if err != nil {
				return Exit(ExitFailed, err)
			}
			remotes, err := remote.Store{Dir: store.Dir()}.Load()
			if err != nil {
				return Exit(ExitFailed, err)
			}
			copies, _, err := bundledCopies(store)
			if err != nil {
				return Exit(ExitFailed, err)
			}
			copies = slices.DeleteFunc(copies, func(c update.Copy) bool { return !bundledNews(c) })
			// A grants file that cannot be read grants nothing: say so.
			grants, gerr := (&registry.HomeStore{Dir: store.Dir()}).Grants()
			if gerr != nil {
				app.warn(fmt.Sprintf("the standing grants cannot be read, so none applies: %v", gerr))
			}
			byPlugin := map[string][]registry.Grant{}
			for _, g := range grants {
				byPlugin[g.Plugin] = append(byPlugin[g.Plugin], g)
			}
			if asJSON {
				out := make([]map[string]any, 0, len(list))
				for _, in := range list {
					b, err := json.Marshal(in.Entry)
					if err != nil {
						return Exit(ExitFailed, err)
					}
					m := map[string]any{}
					if err := json.Unmarshal(b, &m); err != nil {
						return Exit(ExitFailed, err)
					}
					if in.Err != nil {
						m["problem"] = in.Err.Error()
					} else if p, _ := manifest.Parse(in.Files); p != nil {
						if p.Icon != "" {
							m["icon"] = p.Icon
						}
						if p.MaxAgentSteps > 0 {
							m["maxAgentSteps"] = p.MaxAgentSteps
						}
					}
					m["grants"] = listGrants(byPlugin[in.Entry.ID], in.Entry.Hash, in.Entry.Trust)
					out = append(out, m)
				}
				for _, c := range copies {
					m, err := bundledListEntry(c)
					if err != nil {
						return Exit(ExitFailed, err)
					}
					m["grants"] = listGrants(byPlugin[c.ID], c.Hash, c.Trust)
					out = append(out, m)
				}
				for _, id := range slices.Sorted(maps.Keys(remotes)) {
					m := remoteListEntry(remotes[id])
					m["grants"] = listGrants(byPlugin[id], "", "")
					out = append(out, m)
				}
				enc := json.NewEncoder(app.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			if len(grants) > 0 {
				inUse := map[string][2]string{} // id: content hash and trust in use
				for _, in := range list {
					inUse[in.Entry.ID] = [2]string{in.Entry.Hash, in.Entry.Trust}
				}
				for _, c := range copies {
					inUse[c.ID] = [2]string{c.Hash, c.Trust}
				}
				defer writeListGrants(app.Stdout, grants, inUse)
			}
			if len(remotes) > 0 {
				defer writeRemoteList(app.Stdout, remotes)
			}
			if len(copies) > 0 {
				defer writeBundledList(app.Stdout, copies)
			}
			if len(list) == 0 {
				if len(remotes) == 0 && len(copies) == 0 && len(grants) == 0 {
					fmt.Fprintln(app.Stdout, "no documents installed")
				}
				return nil
			}
			tw := tabwriter.NewWriter(app.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tVERSION\tTRUST\tHASH\tLINK")
			for _, in := range list {
				e := in.Entry
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.ID, orDash(e.Version), e.Trust, e.Hash, e.Link)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, in := range list {
				e := in.Entry
				if in.Err != nil {
					fmt.Fprintf(app.Stdout, "%s: %v\n", e.ID, in.Err)
				}
				if !e.Enabled {
					fmt.Fprintf(app.Stdout, "%s: disabled\n", e.ID)
				}
				printPending(app.Stdout, e.ID, e.ID, e.Pending)
				printLastUpdate(app.Stdout, e.ID, e.LastUpdate())
				if e.LastError != "" {
					fmt.Fprintf(app.Stdout, "%s: last update failed: %s\n", e.ID, terminalSafe(e.LastError))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// printPending prints a pending update of the document id under label
// (nothing when pd is nil).
func printPending(w io.Writer, label, id string, pd *fetch.Pending) {
	if pd == nil {
		return
	}
	kind := "update"
	if pd.Wider {
		kind = "update asking for wider access"
	}
	if pd.Downgrade {
		kind += " (downgrade)"
	}
	fmt.Fprintf(w, "%s: pending %s %s (%s); harness accept %s applies it\n", label, kind, orDash(pd.Version), pd.Hash, id)
	if wn := pd.Warning(); wn != "" {
		fmt.Fprintf(w, "    warning: %s\n", terminalSafe(wn))
	}
	for _, l := range pd.Changes {
		fmt.Fprintf(w, "    %s\n", terminalSafe(l))
	}
}

// printLastUpdate prints the last applied update under label (nothing
// when u is nil).
func printLastUpdate(w io.Writer, label string, u *fetch.LastUpdate) {
	if u == nil {
		return
	}
	how := "applied by itself (same or narrower access)"
	if u.Accepted {
		how = "accepted"
	}
	fmt.Fprintf(w, "%s: last update %s -> %s on %s, %s\n", label, orDash(u.FromVersion), orDash(u.ToVersion), u.At.UTC().Format("2006-01-02 15:04"), how)
	for _, l := range u.Changes {
		fmt.Fprintf(w, "    %s\n", terminalSafe(l))
	}
}

// bundledNews reports whether list shows a bundled document: when an
// update of it is stored (in use or not) or pending. A check that only
// failed is said by harness update (and kept in the state): the bundled
// copy works, and an offline home's list is not seven errors long.
func bundledNews(c update.Copy) bool {
	e := c.Entry
	return e != nil && (e.Hash != "" || e.Pending != nil)
}

// bundledListEntry is a bundled document in list --json: its check state
// with "bundled": true, the copy in use (version, hash, trust) and the
// bundled copy's version and hash.
func bundledListEntry(c update.Copy) (map[string]any, error) {
	b, err := json.Marshal(c.Entry)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	// never installed: it came with the build, and its enabling is the
	// bundled document's (permissions.json)
	delete(m, "installed")
	delete(m, "enabled")
	m["bundled"] = true
	m["version"], m["hash"], m["trust"], m["updated"] = c.VersionInUse(), c.Hash, c.Trust, c.Updated
	m["bundledHash"], m["bundledVersion"] = c.BundledHash, c.FloorVersion()
	if c.Obsolete != "" {
		m["problem"] = c.Obsolete
	}
	return m, nil
}

// writeBundledList is the bundled documents' part of list: those with a
// stored or pending update (bundledNews).
func writeBundledList(w io.Writer, copies []update.Copy) {
	fmt.Fprintln(w, "bundled official documents (updated from their links):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tVERSION\tTRUST\tHASH\tLINK")
	for _, c := range copies {
		v := orDash(c.VersionInUse()) + " (bundled)"
		if c.Updated {
			v = orDash(c.Version) + " (updated from bundled " + orDash(c.FloorVersion()) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.ID, v, c.Trust, c.Hash, c.Link)
	}
	tw.Flush()
	for _, c := range copies {
		e := c.Entry
		if c.Obsolete != "" {
			fmt.Fprintf(w, "%s (bundled): %s\n", c.ID, terminalSafe(c.Obsolete))
		}
		printPending(w, c.ID+" (bundled)", c.ID, e.Pending)
		if c.Updated {
			printLastUpdate(w, c.ID+" (bundled)", e.LastUpdate())
		}
		if e.LastError != "" {
			fmt.Fprintf(w, "%s (bundled): last update check: %s\n", c.ID, terminalSafe(e.LastError))
		}
	}
}

// remoteListEntry is a remote plugin in list --json: the fields documents
// have (id, name, trust, link) and what is the remote's own.
func remoteListEntry(e *remote.Entry) map[string]any {
	m := e.Manifest
	tools := make([]map[string]any, 0, len(m.Tools))
	for _, t := range m.Tools {
		tools = append(tools, map[string]any{"id": m.ToolID(&t), "effect": t.Effect})
	}
	out := map[string]any{"id": m.ID, "kind": "remote", "name": m.ServerName, "version": m.ServerVersion,
		"trust": "community", "link": m.URL, "added": e.Added, "tools": tools, "hasToken": e.HasToken}
	if e.Pending != nil {
		out["pending"] = map[string]any{"tools": len(e.Pending.Tools), "wider": true}
	}
	if e.Error != "" {
		out["lastError"] = e.Error
	}
	return out
}

// writeRemoteList is the remote plugins' part of list.
func writeRemoteList(w io.Writer, remotes map[string]*remote.Entry) {
	fmt.Fprintln(w, "remote plugins (MCP servers, community):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSERVER\tTOOLS\tURL")
	for _, id := range slices.Sorted(maps.Keys(remotes)) {
		m := remotes[id].Manifest
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", m.ID, terminalSafe(oneLine(m.ServerName, 40)), len(m.Tools), m.URL)
	}
	tw.Flush()
	for _, id := range slices.Sorted(maps.Keys(remotes)) {
		e := remotes[id]
		if e.Pending != nil {
			fmt.Fprintf(w, "%s: pending tool list with wider access (%d tools); harness accept %s applies it\n", id, len(e.Pending.Tools), id)
		}
		if e.Error != "" {
			fmt.Fprintf(w, "%s: last reconnect failed: %s\n", id, terminalSafe(e.Error))
		}
	}
}

// listGrants is an entry's standing grants in list --json: stale when the
// installed content or trust is no longer what the user allowed (harness
// grants checks the rest: the tool's effect and the rules).
func listGrants(gs []registry.Grant, hash, trust string) []map[string]any {
	out := []map[string]any{}
	for _, g := range gs {
		m := map[string]any{"tool": g.Tool, "effect": g.Effect, "trust": g.Trust, "granted": g.Granted}
		if hash != "" && (g.Hash != hash || string(g.Trust) != trust) {
			m["stale"] = true
		}
		out = append(out, m)
	}
	return out
}

// writeListGrants is the standing grants' part of list (written after the
// documents and the remote plugins: deferred first, it runs last).
func writeListGrants(w io.Writer, grants []registry.Grant, inUse map[string][2]string) {
	fmt.Fprintln(w, "standing grants (the agent's calls of these tools run without asking; harness revoke ID TOOL takes one back):")
	slices.SortFunc(grants, func(a, b registry.Grant) int { return strings.Compare(a.Plugin+"."+a.Tool, b.Plugin+"."+b.Tool) })
	for _, g := range grants {
		note := ""
		if u, ok := inUse[g.Plugin]; ok && (u[0] != g.Hash || u[1] != string(g.Trust)) {
			note = " (stale: the document changed since, so it does not apply)"
		}
		fmt.Fprintf(w, "    %s.%s (%s, since %s)%s\n", g.Plugin, g.Tool, g.Effect, g.Granted.UTC().Format("2006-01-02 15:04"), note)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
