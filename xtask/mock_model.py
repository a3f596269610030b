#!/usr/bin/env python3
"""A scripted model server on 127.0.0.1, for running a real harness release offline.

Why it exists: deja's adapters are written from format pages, and a page can be wrong.
The only proof is what a real release writes. Most harnesses accept an OpenAI-, Anthropic-
or Gemini-compatible base URL, so this server stands in for the model: it answers every
request with a small fixed script (run one shell command through whatever shell tool the
harness offers, optionally write one file, then answer), so the session the harness writes
holds a prompt, a command with its output and an answer that deja must then find.

It speaks, on any path prefix:
  POST .../chat/completions          OpenAI Chat Completions (stream or not)
  POST .../responses                 OpenAI Responses (stream or not)
  POST .../messages                  Anthropic Messages (stream or not), .../count_tokens
  POST ...:generateContent           Gemini (and :streamGenerateContent, SSE or JSON array)
  GET  .../models                    a model list in OpenAI and Anthropic shapes

Every request body is appended to --log as one JSON line, so what a harness sends (its
tool names, its system prompt) can be read afterwards.

Environment (all optional):
  MOCK_STEPS      comma list of steps, default "shell,answer"; steps: shell, write, read, edit, task, wait,
                  agent, answer (read reads MOCK_EDIT_FILE; a hashline edit tool, omp's, needs a read
                  first; task spawns one omp sub-agent whose prompt carries "deja-subtask", which only
                  answers or yields; wait waits for it through omp's `hub`; agent calls the harness's
                  sub-agent tool, `Agent`/`Task`, with a task that makes the sub-agent run
                  `echo deja-subagent-ran` and answer)
  MOCK_COMMAND    the shell command to run, default "echo deja-mock-ran"
  MOCK_FILE       the path the write step writes, default "deja-mock.txt"
  MOCK_EDIT_FILE  the path the edit step edits, default "auth.rs"
  MOCK_EDIT_OLD   the text the edit step replaces, default "fn refresh() {}"
  MOCK_EDIT_NEW   its replacement, default "fn refresh() { rotate(); }"
  MOCK_REASONING  "1" to send a reasoning block before each answer

Run it with no network but loopback, e.g.
  unshare -rn sh -c 'ip link set lo up; python3 xtask/mock_model.py --port 8787 & <harness ...>'
"""

import argparse
import json
import os
import re
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SHELL_TOOL = re.compile(
    r"^(bash|shell|run_shell_command|execute_command|exec_command|exec|run_command|"
    r"terminal|run_terminal_cmd|command|powershell|Bash|Shell|local_shell|shell_command)$",
    re.I,
)
SHELL_LOOSE = re.compile(r"(bash|shell|command|terminal|exec)", re.I)
WRITE_TOOL = re.compile(
    r"^(write|write_file|writefile|create_file|write_to_file|Write|str_replace_based_edit_tool|"
    r"edit_file|create|file_write|save_file|editor|file_editor)$",
    re.I,
)
# Exact-replacement edit tools (pi's `edit` takes `edits[]` of {oldText, newText}).
EDIT_TOOL = re.compile(r"^(edit|edit_file|file_editor|replace|str_replace|str_replace_editor|Edit|replace_in_file|apply_edit)$", re.I)
TASK_TOOL = re.compile(r"^(task|Task|spawn_agent|subagent|delegate)$", re.I)
# A sub-agent's own requests carry this marker in its prompt: it only answers (no recursion).
SUBTASK_MARK = "deja-subtask"
YIELD_TOOL = re.compile(r"^(yield|submit_result|report_result|finish_task|complete_task)$", re.I)
WAIT_TOOL = re.compile(r"^(hub|wait|await_agents|wait_agents)$", re.I)
READ_TOOL = re.compile(r"^(read|read_file|Read|view|view_file|cat)$", re.I)
# omp 18's `edit` takes one hashline `input`: `[PATH#TAG]` (TAG from the latest `read`
# result's header) then ops such as `PUT 1.=1:` and `+` body rows.
HASHLINE_TAG = re.compile(r"\[([^\]\s#]+)#([0-9A-Fa-f]{4})\]")
OLD_KEYS = ("oldText", "old_text", "old_string", "oldStr", "oldString", "old_str")
NEW_KEYS = ("newText", "new_text", "new_string", "newStr", "newString", "new_str")
# A harness that offers both an edit and a write tool (Reasonix: `edit_file` listed before
# `write_file`) gets the write tool for the write step: an edit of a missing file fails.
WRITE_PREFERRED = re.compile(r"^(write|write_file|writefile|create_file|write_to_file|Write|file_write|save_file)$", re.I)
# Sub-agent launchers (Claude Code's `Agent`, formerly `Task`).
AGENT_TOOL = re.compile(r"^(Agent|Task|spawn_agent|subagent|delegate)$", re.I)
# The marker the agent step puts in the sub-agent's task, so the sub-agent's own requests
# (which may offer the same launcher) run a shell and answer instead of recursing.
SUBAGENT_MARK = "deja-subagent-task"
COMMAND_KEYS = ("command", "cmd", "commandLine", "command_line", "script", "code")
PATH_KEYS = ("path", "file_path", "filePath", "filepath", "absolute_path", "target_file", "filename", "file")
CONTENT_KEYS = ("content", "contents", "text", "file_text", "data", "new_content", "new_text")
# Keys that take a list of whole shell commands (Cline's run_commands).
COMMAND_LIST_KEYS = ("commands",)

# Harness-injected context sent as a user message after the tool results (OpenClaw 2026.9
# appends `<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>` to every request): not a new prompt, so it
# must not restart the step script (it made the mock call the shell tool forever).
# A user message that is only a reminder (OpenClaude sends `<system-reminder>snip_id=…`
# after each tool result) is the harness talking, not a new prompt.
INJECTED_USER = re.compile(r"^\s*(<<<BEGIN_[A-Z_]+>>>|<system-reminder>[^<]*</system-reminder>\s*$)")

LOG = None


def log(entry):
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def steps():
    return [s.strip() for s in os.environ.get("MOCK_STEPS", "shell,answer").split(",") if s.strip()]


# ---------------------------------------------------------------- reading the conversation


def text_of(content):
    """Plain text of a message content in any of the three shapes."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                if part.get("type") in ("text", "input_text", "output_text") or "text" in part:
                    out.append(str(part.get("text", "")))
        return "\n".join(out)
    return ""


def last_text(content):
    """The last non-empty text part of a content: harnesses put their own reminders
    (Qwen's <system-reminder> blocks, Gemini's <session_context>) in parts before the
    typed prompt, and the answer should quote the prompt."""
    if isinstance(content, list):
        texts = [text_of([p]) for p in content]
        return next((t for t in reversed(texts) if t.strip()), "")
    return text_of(content)


def conversation(api, body):
    """(last user prompt, tool results since it) for one request."""
    prompt, results = "", 0
    if api == "gemini":
        for c in body.get("contents", []):
            parts = c.get("parts", [])
            if any("functionResponse" in p for p in parts):
                results += 1
            elif c.get("role", "user") == "user":
                # The last text part: Gemini CLI sends its <session_context> preamble as the
                # first part of the first user message, the typed prompt after it.
                texts = [p.get("text", "") for p in parts if "text" in p and not p.get("thought")]
                t = next((x for x in reversed(texts) if x.strip()), "")
                if t.strip():
                    prompt, results = t, 0
        return prompt, results
    if api == "responses":
        items = body.get("input", [])
        if isinstance(items, str):
            return items, 0
        for it in items:
            kind = it.get("type", "message")
            if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
                results += 1
            elif kind == "message" and it.get("role") == "user":
                t = last_text(it.get("content"))
                if t.strip():
                    prompt, results = t, 0
        return prompt, results
    for m in body.get("messages", []):
        role = m.get("role")
        content = m.get("content")
        if role == "tool":
            results += 1
        elif role == "user":
            if isinstance(content, list) and any(
                isinstance(p, dict) and p.get("type") == "tool_result" for p in content
            ):
                results += 1
                continue
            t = last_text(content)
            if t.strip() and not INJECTED_USER.match(t):
                prompt, results = t, 0
    return prompt, results


def last_tool_text(api, body):
    """The text of the latest tool result (Chat Completions and Anthropic shapes)."""
    out = ""
    for m in body.get("messages", []) or []:
        content = m.get("content")
        if m.get("role") == "tool":
            out = text_of(content)
        elif m.get("role") == "user" and isinstance(content, list):
            for p in content:
                if isinstance(p, dict) and p.get("type") == "tool_result":
                    out = text_of(p.get("content"))
    return out


def tools_of(api, body):
    """[(name, json schema)] of the tools a request offers."""
    out = []
    for t in body.get("tools", []) or []:
        if api == "gemini":
            for fd in t.get("functionDeclarations", t.get("function_declarations", [])) or []:
                out.append((fd.get("name", ""), fd.get("parameters") or fd.get("parametersJsonSchema") or {}))
        elif "function" in t and isinstance(t["function"], dict):
            out.append((t["function"].get("name", ""), t["function"].get("parameters") or {}))
        else:
            out.append((t.get("name", ""), t.get("input_schema") or t.get("parameters") or {}))
    return out


def pick(tools, strict, loose=None):
    for name, schema in tools:
        if strict.match(name):
            return name, schema
    if loose:
        for name, schema in tools:
            if loose.search(name):
                return name, schema
    return None


def fill(schema, values):
    """Arguments for a tool: our values where a key matches, a harmless value elsewhere."""
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    required = schema.get("required", []) if isinstance(schema, dict) else []
    args = {}
    for key, spec in props.items():
        if key in values:
            args[key] = values[key]
            continue
        if key not in required:
            continue
        kind = spec.get("type") if isinstance(spec, dict) else None
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        if isinstance(spec, dict) and spec.get("enum"):
            args[key] = spec["enum"][0]
        elif kind == "boolean":
            args[key] = False
        elif kind in ("integer", "number"):
            args[key] = 30
        elif kind == "array":
            # An array of objects (pi's `edits[]`): one item filled from the same values.
            items = spec.get("items") if isinstance(spec, dict) else None
            if isinstance(items, dict) and items.get("properties"):
                args[key] = [fill(items, values)]
            else:
                args[key] = []
        elif kind == "object":
            args[key] = {}
        else:
            args[key] = "deja mock"
    return args


def decide(api, body):
    """The next action: ("tool", name, args) or ("text", answer)."""
    prompt, results = conversation(api, body)
    tools = tools_of(api, body)
    plan = steps()
    sub = SUBAGENT_MARK in prompt
    if sub:
        plan = ["shell", "answer"]
    tool_steps = [s for s in plan if s != "answer"]
    if SUBTASK_MARK in prompt:
        # A sub-agent answers; when it must hand its result back through a tool (omp's
        # `yield`), it calls that once.
        found = pick(tools, YIELD_TOOL)
        if found and results == 0:
            name, schema = found
            text = "deja-sub-answer: the project has auth.rs"
            values = {"result": text, "data": text, "output": text, "summary": text, "message": text, "i": "report back"}
            return ("tool", name, fill(schema, values))
        tool_steps = []
    if tools and results < len(tool_steps):
        step = tool_steps[results]
        if step == "shell":
            found = pick(tools, SHELL_TOOL, SHELL_LOOSE)
            if found:
                cmd = "echo deja-subagent-ran" if sub else os.environ.get("MOCK_COMMAND", "echo deja-mock-ran")
                values = {k: cmd for k in COMMAND_KEYS}
                values.update({k: [cmd] for k in COMMAND_LIST_KEYS})
                values.update({"description": "run the deja probe", "timeout": 30000})
                name, schema = found
                args = fill(schema, values)
                if not any(k in args for k in COMMAND_KEYS + COMMAND_LIST_KEYS):
                    args["command"] = cmd
                # A timeout the schema counts in seconds (Hermes' `terminal`: "Max seconds",
                # foreground max 600) must not get the millisecond default: 30000 s is refused.
                spec = (schema.get("properties", {}) if isinstance(schema, dict) else {}).get("timeout")
                if "timeout" in args and isinstance(spec, dict) and "second" in str(spec.get("description", "")).lower():
                    args["timeout"] = 30
                return ("tool", name, args)
        if step == "write":
            found = pick(tools, WRITE_PREFERRED) or pick(tools, WRITE_TOOL)
            if found:
                name, schema = found
                path = os.environ.get("MOCK_FILE", "deja-mock.txt")
                values = {k: path for k in PATH_KEYS}
                values.update({k: "written by the deja mock\n" for k in CONTENT_KEYS})
                values.update({"command": "create"})
                return ("tool", name, fill(schema, values))
        if step == "task":
            found = pick(tools, TASK_TOOL)
            if found:
                name, schema = found
                text = f"{SUBTASK_MARK}: list the files of the project and report"
                values = {"task": text, "prompt": text, "description": text, "context": "deja mock context",
                          "name": "deja-sub", "i": "delegate a listing", "agent": "task"}
                return ("tool", name, fill(schema, values))
        if step == "wait":
            found = pick(tools, WAIT_TOOL)
            if found:
                name, schema = found
                return ("tool", name, fill(schema, {"op": "wait", "i": "wait for the sub-agent", "timeout": 60}))
        if step == "read":
            found = pick(tools, READ_TOOL)
            if found:
                name, schema = found
                values = {k: os.environ.get("MOCK_EDIT_FILE", "auth.rs") for k in PATH_KEYS}
                values.update({"i": "read before editing"})
                return ("tool", name, fill(schema, values))
        if step == "agent":
            found = pick(tools, AGENT_TOOL)
            if found:
                name, schema = found
                values = {"description": "deja probe agent", "prompt": f"{SUBAGENT_MARK}: check the jwt refresh rotation",
                          "subagent_type": "general-purpose", "run_in_background": False}
                return ("tool", name, fill(schema, values))
        if step == "edit":
            found = pick(tools, EDIT_TOOL)
            if found:
                name, schema = found
                props = schema.get("properties", {}) if isinstance(schema, dict) else {}
                tag = HASHLINE_TAG.search(last_tool_text(api, body))
                if "input" in props and not any(k in props for k in OLD_KEYS) and tag:
                    # A hashline edit of line 1 (run a `read` step first for the tag).
                    new_line = os.environ.get("MOCK_EDIT_NEW", "fn refresh() { rotate(); }")
                    body_text = f"[{tag.group(1)}#{tag.group(2)}]\nPUT 1.=1:\n+{new_line}\n"
                    return ("tool", name, fill(schema, {"input": body_text, "i": "rotate on refresh"}))
                values = {k: os.environ.get("MOCK_EDIT_FILE", "auth.rs") for k in PATH_KEYS}
                values.update({k: os.environ.get("MOCK_EDIT_OLD", "fn refresh() {}") for k in OLD_KEYS})
                values.update({k: os.environ.get("MOCK_EDIT_NEW", "fn refresh() { rotate(); }") for k in NEW_KEYS})
                # An editor with sub-commands (OpenHands' `file_editor`) is told which one.
                if "str_replace" in ((props.get("command") or {}).get("enum") or []):
                    values["command"] = "str_replace"
                return ("tool", name, fill(schema, values))
    # gptme's non-interactive loop answers a tool-less reply with an injected
    # `<system>No tool call detected…` user message: end the session with its `complete`
    # tool instead of restarting the script forever.
    if tools and prompt.lstrip().startswith("<system>"):
        found = pick(tools, re.compile(r"^complete$"))
        if found:
            return ("tool", found[0], fill(found[1], {}))
    words = " ".join(prompt.split()[:8])
    return ("text", f"deja-mock-answer: I read your request ({words}) and it is done.")


def reasoning():
    return "deja-mock-reasoning: thinking about the request" if os.environ.get("MOCK_REASONING") == "1" else None


# ---------------------------------------------------------------- the four wire formats


def usage_openai():
    return {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}


def chat_completions(body):
    action = decide("chat", body)
    cid, model, now = "chatcmpl-" + uuid.uuid4().hex[:12], body.get("model", "mock-model"), int(time.time())
    think = reasoning() if action[0] == "text" else None
    if action[0] == "tool":
        call = {"id": "call_" + uuid.uuid4().hex[:10], "type": "function",
                "function": {"name": action[1], "arguments": json.dumps(action[2])}}
        message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": action[1]}, "stop"
        if think:
            message["reasoning_content"] = think
    if not body.get("stream"):
        return "json", {"id": cid, "object": "chat.completion", "created": now, "model": model,
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": usage_openai()}
    def chunk(delta, finish_reason=None, usage=None):
        c = {"id": cid, "object": "chat.completion.chunk", "created": now, "model": model,
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
        if usage:
            c["usage"] = usage
        return c
    events = [chunk({"role": "assistant", "content": ""})]
    if think:
        events.append(chunk({"reasoning_content": think}))
    if action[0] == "tool":
        call = message["tool_calls"][0]
        events.append(chunk({"tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                             "function": {"name": call["function"]["name"], "arguments": ""}}]}))
        events.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": call["function"]["arguments"]}}]}))
    else:
        half = len(action[1]) // 2
        events.append(chunk({"content": action[1][:half]}))
        events.append(chunk({"content": action[1][half:]}))
    events.append(chunk({}, finish))
    events.append({"id": cid, "object": "chat.completion.chunk", "created": now, "model": model,
                   "choices": [], "usage": usage_openai()})
    return "sse", [(None, e) for e in events] + [(None, "[DONE]")]


def responses(body):
    action = decide("responses", body)
    rid, model = "resp_" + uuid.uuid4().hex[:12], body.get("model", "mock-model")
    if action[0] == "tool":
        item = {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:10], "call_id": "call_" + uuid.uuid4().hex[:10],
                "name": action[1], "arguments": json.dumps(action[2]), "status": "completed"}
    else:
        item = {"type": "message", "id": "msg_" + uuid.uuid4().hex[:10], "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": action[1], "annotations": []}]}
    usage = {"input_tokens": 12, "output_tokens": 8, "total_tokens": 20,
             "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
    # MOCK_REASONING: a reasoning item with a summary before the answer (Codex records it).
    think = reasoning() if action[0] == "text" else None
    thought = {"type": "reasoning", "id": "rs_" + uuid.uuid4().hex[:10], "encrypted_content": None,
               "summary": [{"type": "summary_text", "text": think}]} if think else None
    full = {"id": rid, "object": "response", "created_at": int(time.time()), "status": "completed",
            "model": model, "output": ([thought] if thought else []) + [item], "usage": usage}
    if not body.get("stream"):
        return "json", full
    start = dict(full, status="in_progress", output=[])
    ev = [("response.created", {"type": "response.created", "response": start})]
    if thought:
        ev.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                   "item": dict(thought, summary=[])}))
        ev.append(("response.reasoning_summary_text.delta", {"type": "response.reasoning_summary_text.delta",
                   "item_id": thought["id"], "output_index": 0, "summary_index": 0, "delta": think}))
        ev.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": thought}))
    if item["type"] == "message":
        empty = dict(item, content=[], status="in_progress")
        ev.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": empty}))
        ev.append(("response.content_part.added", {"type": "response.content_part.added", "item_id": item["id"],
                   "output_index": 0, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}))
        ev.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                   "output_index": 0, "content_index": 0, "delta": action[1]}))
        ev.append(("response.output_text.done", {"type": "response.output_text.done", "item_id": item["id"],
                   "output_index": 0, "content_index": 0, "text": action[1]}))
        ev.append(("response.content_part.done", {"type": "response.content_part.done", "item_id": item["id"],
                   "output_index": 0, "content_index": 0, "part": item["content"][0]}))
    else:
        ev.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                   "item": dict(item, arguments="", status="in_progress")}))
        ev.append(("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta",
                   "item_id": item["id"], "output_index": 0, "delta": item["arguments"]}))
        ev.append(("response.function_call_arguments.done", {"type": "response.function_call_arguments.done",
                   "item_id": item["id"], "output_index": 0, "arguments": item["arguments"]}))
    ev.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}))
    ev.append(("response.completed", {"type": "response.completed", "response": full}))
    return "sse", ev


def messages(body):
    action = decide("chat", body)
    mid, model = "msg_" + uuid.uuid4().hex[:12], body.get("model", "mock-model")
    think = reasoning() if action[0] == "text" else None
    blocks = []
    if think:
        blocks.append({"type": "thinking", "thinking": think, "signature": "bW9jaw=="})
    if action[0] == "tool":
        blocks.append({"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:12], "name": action[1], "input": action[2]})
        stop = "tool_use"
    else:
        blocks.append({"type": "text", "text": action[1]})
        stop = "end_turn"
    usage = {"input_tokens": 12, "output_tokens": 8, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    full = {"id": mid, "type": "message", "role": "assistant", "model": model, "content": blocks,
            "stop_reason": stop, "stop_sequence": None, "usage": usage}
    if not body.get("stream"):
        return "json", full
    ev = [("message_start", {"type": "message_start", "message": dict(full, content=[], stop_reason=None)})]
    for i, b in enumerate(blocks):
        if b["type"] == "thinking":
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                       "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                       "delta": {"type": "thinking_delta", "thinking": b["thinking"]}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                       "delta": {"type": "signature_delta", "signature": b["signature"]}}))
        elif b["type"] == "text":
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                       "content_block": {"type": "text", "text": ""}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                       "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                       "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                       "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
               "usage": {"output_tokens": 8}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    return "sse", ev


def gemini(body, stream, sse):
    action = decide("gemini", body)
    parts = []
    think = reasoning() if action[0] == "text" else None
    if think:
        parts.append({"text": think, "thought": True})
    if action[0] == "tool":
        parts.append({"functionCall": {"name": action[1], "args": action[2]}})
    else:
        parts.append({"text": action[1]})
    resp = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 8, "totalTokenCount": 20},
            "modelVersion": "mock-model"}
    if not stream:
        return "json", resp
    if sse:
        return "sse", [(None, resp)]
    return "json", [resp]


# ---------------------------------------------------------------- HTTP


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("mock: " + (fmt % args) + "\n")

    def reply_json(self, obj, code=200):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def reply_sse(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in events:
            payload = data if isinstance(data, str) else json.dumps(data)
            chunk = (f"event: {name}\n" if name else "") + f"data: {payload}\n\n"
            self.wfile.write(chunk.encode())
            self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        log({"method": "GET", "path": self.path})
        if self.path.split("?")[0].rstrip("/").endswith("models"):
            model = {"id": "mock-model", "object": "model", "created": 0, "owned_by": "deja",
                     "type": "model", "display_name": "Mock Model", "name": "models/mock-model"}
            return self.reply_json({"object": "list", "data": [model], "models": [model],
                                    "has_more": False, "first_id": "mock-model", "last_id": "mock-model"})
        return self.reply_json({"error": {"message": "not found"}}, 404)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        log({"method": "POST", "path": self.path, "body": body})
        if path.endswith("/count_tokens"):
            return self.reply_json({"input_tokens": 12})
        if path.endswith("/chat/completions"):
            kind, out = chat_completions(body)
        elif path.endswith("/responses"):
            kind, out = responses(body)
        elif path.endswith("/messages"):
            kind, out = messages(body)
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            kind, out = gemini(body, "stream" in path, "alt=sse" in self.path)
        elif ":countTokens" in path:
            return self.reply_json({"totalTokens": 12})
        else:
            return self.reply_json({"error": {"message": f"mock: no route for {path}"}}, 404)
        return self.reply_json(out) if kind == "json" else self.reply_sse(out)


def main():
    global LOG
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8787)
    ap.add_argument("--log", default=None, help="append each request as a JSON line here")
    args = ap.parse_args()
    LOG = args.log
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    sys.stderr.write(f"mock model on http://127.0.0.1:{args.port}\n")
    server.serve_forever()


if __name__ == "__main__":
    main()
