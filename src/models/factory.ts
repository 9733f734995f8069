/**
 * Which model providers a run uses and how to reach them: the registry of providers, and the endpoints of a
 * run (the agent's model, the smart approver's) resolved from the run configuration.
 */
import type { RunConfig } from "../config/run_config.js";
import { UserError } from "../core/errors.js";
import { createRegistry } from "../core/registry.js";
import { expandHeaders, mergeHeaders } from "../config/headers.js";
import { splitUrlCredentials } from "../core/url_credentials.js";
import {
  OPENROUTER_DEFAULT_REASONING_EFFORT,
  isOpenRouter,
  type ModelEndpointOptions,
  type ModelProvider,
  type ProviderRouting,
} from "./provider.js";
import { parseScriptedModel } from "./scripted.js";

export { parseScriptedModel };

export const DEFAULT_BASE_URL = "https://openrouter.ai/api/v1";

export const modelProviders = createRegistry<ModelProvider>("model provider");
modelProviders.register("openai", async () => (await import("./openai_compatible.js")).openaiProvider);
modelProviders.register("scripted", async () => (await import("./scripted.js")).scriptedProvider);

/** One endpoint the run calls: which provider, with what options, and its identity for the shared limiter. */
export interface ModelEndpoint {
  /** Base URL (without trailing slashes) and model: the run-wide limiter is shared by everything with this key. */
  key: string;
  provider: string;
  options: ModelEndpointOptions;
}

/** The sharing key of an endpoint: base URL (without trailing slashes or credentials) and model. Never includes a key. */
export function endpointKey(baseURL: string, model: string): string {
  return `${splitUrlCredentials(baseURL).url.replace(/\/+$/, "")}#${model}`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** The provider routing the run asks for (`--providers-allowed` …), undefined when none. */
export function providerRouting(config: RunConfig): ProviderRouting | undefined {
  const r: ProviderRouting = {};
  if (config.providers_allowed?.length) r.only = config.providers_allowed;
  if (config.providers_ignored?.length) r.ignore = config.providers_ignored;
  if (config.providers_order?.length) r.order = config.providers_order;
  if (config.provider_sort) r.sort = config.provider_sort;
  return Object.keys(r).length ? r : undefined;
}

/** Every endpoint a run calls, by who calls it (a judge is added here, and nowhere else). */
export interface RunEndpoints {
  agent: ModelEndpoint;
  /** The smart approver's endpoint; absent without smart approval or with none to ask (the scripted demo: fail-closed). */
  approver?: ModelEndpoint;
  /** The rubric judge's endpoint; absent for the scripted demo unless --judge-model names one. */
  judge?: ModelEndpoint;
}

export function runEndpoints(config: RunConfig, env: NodeJS.ProcessEnv = process.env): RunEndpoints {
  // `oracle` (Harbor tasks: solution/solve.sh instead of a model) calls no model: an offline endpoint like the demo's.
  const scripted = parseScriptedModel(config.model) ?? (config.model === "oracle" ? { latencyMs: 0 } : undefined);
  if (!scripted && !config.model)
    throw new UserError("--model is required (use --model scripted for the built-in demo model)");
  const expand = (key: "headers" | "approval_headers" | "judge_headers") => {
    try {
      return expandHeaders(config[key], env, key);
    } catch (err) {
      throw new UserError(err instanceof Error ? err.message : String(err));
    }
  };
  const agentHeaders = expand("headers");
  const routing = providerRouting(config);
  const model = config.model!;
  const agentURL = scripted ? "" : (config.base_url ?? DEFAULT_BASE_URL);
  const agent: ModelEndpoint = {
    key: scripted ? model : endpointKey(agentURL, model),
    provider: scripted ? "scripted" : "openai",
    options: {
      model,
      baseURL: agentURL,
      apiKey: config.api_key,
      maxTokens: config.max_tokens,
      temperature: config.temperature,
      // Hermes asks OpenRouter for reasoning by default; --reasoning-effort none turns it off.
      reasoningEffort:
        config.reasoning_effort ??
        (!scripted && isOpenRouter(agentURL) ? OPENROUTER_DEFAULT_REASONING_EFFORT : undefined),
      extraBody: config.extra_body,
      stream: config.stream,
      sendReasoningBack: config.preserve_reasoning,
      // The agent's calls only: approver and judge answers are never trained on.
      ...(config.rl_capture ? { rlCapture: true } : {}),
      ...(agentHeaders && Object.keys(agentHeaders).length ? { headers: agentHeaders } : {}),
      ...(routing ? { providerRouting: routing } : {}),
    },
  };
  // The approver defaults to the run's own endpoint and model; the scripted demo has none.
  const approverURL = config.approval_base_url ?? config.base_url ?? (scripted ? undefined : DEFAULT_BASE_URL);
  const approverModel = config.approval_model ?? (scripted ? undefined : model);
  // The run's key, headers and provider routing go to an auxiliary model only when it is on the run's own host.
  const sameHost = (url: string) => hostOf(url) === hostOf(config.base_url ?? DEFAULT_BASE_URL);
  const sameHostKey = (url: string) => (sameHost(url) ? config.api_key : undefined);
  const auxiliary = (url: string, own: Record<string, string>) => {
    const headers = mergeHeaders(sameHost(url) ? agentHeaders : {}, own);
    return {
      ...(Object.keys(headers).length ? { headers } : {}),
      ...(routing && sameHost(url) ? { providerRouting: routing } : {}),
    };
  };
  const approver: ModelEndpoint | undefined =
    config.approval === "smart" && approverURL && approverModel
      ? {
          key: endpointKey(approverURL, approverModel),
          provider: parseScriptedModel(approverModel) ? "scripted" : "openai",
          options: {
            model: approverModel,
            baseURL: approverURL,
            apiKey: config.approval_api_key ?? sameHostKey(approverURL),
            temperature: 0,
            maxTokens: 300,
            ...auxiliary(approverURL, expand("approval_headers")),
          },
        }
      : undefined;
  // The rubric judge, like the approver, defaults to the run's endpoint and model.
  const judgeURL = config.judge_base_url ?? config.base_url ?? (scripted ? undefined : DEFAULT_BASE_URL);
  const judgeModel = config.judge_model ?? (scripted ? undefined : model);
  const judge: ModelEndpoint | undefined =
    judgeURL && judgeModel
      ? {
          key: endpointKey(judgeURL, judgeModel),
          provider: parseScriptedModel(judgeModel) ? "scripted" : "openai",
          options: {
            model: judgeModel,
            baseURL: judgeURL,
            apiKey: config.judge_api_key ?? sameHostKey(judgeURL),
            temperature: 0,
            maxTokens: 600,
            ...auxiliary(judgeURL, expand("judge_headers")),
          },
        }
      : undefined;
  return { agent, ...(approver ? { approver } : {}), ...(judge ? { judge } : {}) };
}
