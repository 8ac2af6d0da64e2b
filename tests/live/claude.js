// The real Claude Code set up as a person would, for the live suite and the
// decision benchmark: onboarding done, the key approved, the folder trusted,
// our hooks installed by the real report-prompt, and the manual permission
// mode, in which Claude Code asks before running a command.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CLAUDE } from "./clis.js";
import { inTmux } from "./harness.js";
import { ROOT, sleep } from "../worker/helpers.js";

const KEY = `sk-ant-api03-${"k".repeat(80)}`;

/**
 * Prepares `live.home` for Claude Code against `model`, reporting to
 * `live.w` with `task`'s credential, and returns the agent's environment
 * (`extra` added to it). Our hooks come from `report-prompt install`, or,
 * with `{ plugin: true }`, from this repository's marketplace through
 * Claude Code's own `claude plugin install`, finding `reporter` on the PATH.
 * `mcpServers` are the user's MCP servers; `allow`, tools allowed without asking.
 */
export function claudeEnv(live, model, task, reporter, extra = {}, { plugin = false, mcpServers, allow } = {}) {
  const { home, cwd } = live;
  writeFileSync(join(home, ".claude.json"), JSON.stringify({
    hasCompletedOnboarding: true, lastOnboardingVersion: "2.1.332", theme: "dark",
    customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] },
    hasSeenAutoDefaultNotice: true, hasSeenAutoDefaultNudge: true,
    projects: { [cwd]: { hasTrustDialogAccepted: true, allowedTools: [] } },
    ...(mcpServers ? { mcpServers } : {}),
  }));
  const env = { ...process.env, HOME: home };
  delete env.CLAUDE_CONFIG_DIR;
  if (plugin) {
    execFileSync(CLAUDE, ["plugin", "marketplace", "add", ROOT], { env, stdio: "pipe" });
    execFileSync(CLAUDE, ["plugin", "install", "needs-you@needs-you"], { env, stdio: "pipe" });
  } else {
    execFileSync(reporter, ["install", "--cli", "claude-code"], { env });
  }
  const settingsPath = join(home, ".claude", "settings.json");
  const settings = JSON.parse(readFileSync(settingsPath, "utf8"));
  writeFileSync(settingsPath, JSON.stringify({ ...settings, permissions: { defaultMode: "default", ...(allow ? { allow } : {}) } }, null, 2));
  return {
    HOME: home, PATH: plugin ? `${dirname(reporter)}:${process.env.PATH}` : process.env.PATH, TERM: "xterm-256color",
    ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: KEY,
    DISABLE_TELEMETRY: 1, DISABLE_AUTOUPDATER: 1, DISABLE_ERROR_REPORTING: 1, DISABLE_BUG_COMMAND: 1,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: 1, CLAUDE_CODE_DISABLE_FEATURE_FLAGS: 1, CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: 1,
    NEEDS_YOU_URL: live.w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_OWNER: live.key.fingerprint, NEEDS_YOU_STATE_DIR: join(home, "state"),
    NEEDS_YOU_CONTENT_KEYS: live.keysFile,
    ...extra,
  };
}

/** Starts Claude Code with `vars` in a tmux of its own (by `command`, which
 *  may start it through `needs-you run`); resolves at its prompt. */
export async function startClaude(socket, cwd, vars, command = CLAUDE) {
  // A pane gets the tmux server's environment: set ours in the pane's command.
  const term = inTmux(socket, cwd, vars, command);
  try {
    await term.waitFor(/❯/, 60_000);
  } catch (e) {
    term.stop();
    throw e;
  }
  await sleep(1500);
  return term;
}
