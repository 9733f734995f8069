/** Tool names of the original Hermes (data only: used by tools/ for toolsets and by src/ for tool_stats keys). */

/** The original's browser toolset (upstream since 2026-04: browser_close removed; console, cdp, dialog added). */
export const BROWSER_TOOLS: readonly string[] = Object.freeze([
  "browser_navigate",
  "browser_snapshot",
  "browser_click",
  "browser_type",
  "browser_scroll",
  "browser_back",
  "browser_press",
  "browser_get_images",
  "browser_vision",
  "browser_console",
  "browser_cdp",
  "browser_dialog",
]);

/**
 * Every tool the original registers, the key set of its `tool_stats` / `tool_error_counts` (batch_runner
 * normalises both over its whole registry, so a Hugging Face table has one schema). Taken from the
 * upstream "Built-in Tools Reference" (website/docs/reference/tools-reference.md) plus browser_dialog;
 * a newer upstream may register more: add them here, and every entry of every run picks them up.
 */
export const HERMES_TOOL_NAMES: readonly string[] = Object.freeze([
  ...BROWSER_TOOLS,
  "clarify",
  "execute_code",
  "cronjob",
  "delegate_task",
  "feishu_doc_read",
  "feishu_drive_add_comment",
  "feishu_drive_list_comments",
  "feishu_drive_list_comment_replies",
  "feishu_drive_reply_comment",
  "read_file",
  "write_file",
  "patch",
  "search_files",
  "ha_call_service",
  "ha_get_state",
  "ha_list_entities",
  "ha_list_services",
  "image_generate",
  "memory",
  "send_message",
  "mixture_of_agents",
  "rl_check_status",
  "rl_edit_config",
  "rl_get_current_config",
  "rl_get_results",
  "rl_list_environments",
  "rl_list_runs",
  "rl_select_environment",
  "rl_start_training",
  "rl_stop_training",
  "rl_test_inference",
  "session_search",
  "skill_manage",
  "skill_view",
  "skills_list",
  "terminal",
  "process",
  "todo",
  "vision_analyze",
  "web_search",
  "web_extract",
  "text_to_speech",
]);
