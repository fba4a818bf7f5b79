//! A real client: headless Neovim's built-in LSP client drives `kora lsp` through diagnostics,
//! hover, references, rename and a quick fix, applying the edits to its own buffer, and the
//! fixed buffer's diagnostics clear. Skipped, with a message, when `nvim` is not installed (the
//! test never fetches it: `apt-get install neovim` brings it).

mod protocol;

use std::process::Command;
use std::time::Duration;

use protocol::scratch;
use serde_json::Value;

const PROGRAM: &str = r#"def total(xs: list[int]) -> int:
    """Adds them up."""
    s = 0
    for x in xs:
        s = s + x
    return s

print(totl([1, 2]))
n = total([3])
"#;

/// Neovim 0.7's Lua API (the oldest Debian ships): start the client, attach it, ask, write
/// what came back as JSON, quit.
const SCRIPT: &str = r#"
local out = {}
local main = os.getenv("KORA_MAIN")
vim.cmd("edit " .. main)
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start_client({
  cmd = { os.getenv("KORA_BIN"), "lsp" },
  root_dir = os.getenv("KORA_DIR"),
  name = "kora",
})
vim.lsp.buf_attach_client(buf, id)
out.got_diagnostics = vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 20)
out.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do
  table.insert(out.diagnostics, { line = d.lnum, message = d.message })
end
local uri = vim.uri_from_bufnr(buf)
local function ask(method, params)
  local r = vim.lsp.buf_request_sync(buf, method, params, 30000)
  if r == nil or r[id] == nil then return vim.NIL end
  if r[id].err then return { error = r[id].err.message } end
  return r[id].result or vim.NIL
end
local function at(line, character)
  return { textDocument = { uri = uri }, position = { line = line, character = character } }
end
local hover = ask("textDocument/hover", at(8, 5))
out.hover = hover ~= vim.NIL and hover.contents.value or ""
local refs_params = at(0, 5)
refs_params.context = { includeDeclaration = true }
out.references = #ask("textDocument/references", refs_params)
local rename_params = at(2, 4)
rename_params.newName = "acc"
vim.lsp.util.apply_workspace_edit(ask("textDocument/rename", rename_params), "utf-16")
local actions = ask("textDocument/codeAction", {
  textDocument = { uri = uri },
  range = { start = { line = 7, character = 7 }, ["end"] = { line = 7, character = 7 } },
  context = { diagnostics = {} },
})
out.action = actions[1] and actions[1].title or ""
if actions[1] then vim.lsp.util.apply_workspace_edit(actions[1].edit, "utf-16") end
out.cleared = vim.wait(30000, function() return #vim.diagnostic.get(buf) == 0 end, 20)
out.lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
local f = io.open(os.getenv("KORA_OUT"), "w")
f:write(vim.fn.json_encode(out))
f:close()
vim.lsp.stop_client(id)
vim.cmd("qa!")
"#;

#[test]
fn headless_neovim_drives_the_server() {
    let found = Command::new("nvim").arg("--version").output();
    if !found.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: `nvim` is not installed (apt-get install neovim); the real-client smoke test did not run");
        return;
    }
    let dir = scratch("lsp-nvim");
    let main = dir.join("main.ko");
    std::fs::write(&main, PROGRAM).expect("write program");
    std::fs::write(dir.join("smoke.lua"), SCRIPT).expect("write script");
    let out = dir.join("out.json");
    let mut child = Command::new("nvim")
        .args([
            "--headless",
            "--clean",
            "-n",
            "-i",
            "NONE",
            "-c",
            "luafile smoke.lua",
        ])
        .current_dir(&dir)
        .env("KORA_BIN", env!("CARGO_BIN_EXE_kora"))
        .env("KORA_MAIN", &main)
        .env("KORA_DIR", &dir)
        .env("KORA_OUT", &out)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .spawn()
        .expect("start nvim");
    // Not a timing assertion: only how long a hung editor may hold the test.
    let mut waited = Duration::ZERO;
    while child.try_wait().expect("wait for nvim").is_none() {
        if waited > Duration::from_secs(180) {
            let _ = child.kill();
            panic!("nvim did not finish");
        }
        std::thread::sleep(Duration::from_millis(50));
        waited += Duration::from_millis(50);
    }
    let text = std::fs::read_to_string(&out).expect("nvim wrote its results");
    let v: Value = serde_json::from_str(&text).expect("JSON from nvim");
    assert_eq!(v["got_diagnostics"], true, "{v}");
    let ds = v["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(ds.len(), 1, "{v}");
    assert_eq!(ds[0]["line"], 7);
    assert!(
        ds[0]["message"].as_str().unwrap_or("").contains("totl"),
        "{v}"
    );
    assert!(
        v["hover"].as_str().unwrap_or("").contains("Adds them up."),
        "{v}"
    );
    assert_eq!(v["references"], 2, "{v}");
    assert_eq!(v["action"], "Change to `total`", "{v}");
    assert_eq!(v["cleared"], true, "{v}");
    let lines: Vec<&str> = v["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l.as_str().unwrap_or(""))
        .collect();
    assert_eq!(lines[2], "    acc = 0");
    assert_eq!(lines[4], "        acc = acc + x");
    assert_eq!(lines[7], "print(total([1, 2]))");
}
