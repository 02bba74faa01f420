"""Key variables and probes of served models at check time: every named key variable set, and
one cheap call to each served model the design asks to be tried (every served judge, each
served chatbot with `probe = true`, and every chatbot on the researcher's own vLLM server
(`hosted_vllm/`), whose call costs nothing), through the normal served door but with check-time
transport (one try, a short timeout), so that a down server is told in a second, not after
the run's retries, and with a fix for the check, not for a stopped run. A chatbot's probe is
asked as its replies will be (its thinking setting included) and read as they will be: a reply
that shows thinking from a chatbot whose design says it does not think is refused here."""

from __future__ import annotations

import os

from diarylab.chatbots.specs import ServedChatbotSpec
from diarylab.foundation.errors import LabError
from diarylab.model_access.completions import CompletionRequest
from diarylab.model_access.served import ServedClient
from diarylab.model_access.settings import EndpointSettings, GenerationSettings

# One try at check time: a run retries a flaky server, a check only needs to know it answers.
# The timeout leaves a large judge time to read the probe prompt.
CHECK_TIMEOUT_S = 30.0
PING = CompletionRequest(
    messages=(("user", "Reply with the word OK."),),
    generation=GenerationSettings(max_new_tokens=1, temperature=0.0),
)
# Enough new tokens for a thinking model to show it thinks (its first is "<think>", or a
# reasoning parser's field fills), few enough that a billed probe costs next to nothing.
CHATBOT_PROBE = GenerationSettings(max_new_tokens=8, temperature=0.0)
SELF_HOSTED = "hosted_vllm/"


def check_endpoint(settings: EndpointSettings) -> EndpointSettings:
    """The endpoint as a check reaches it: one try, no backoff, at most CHECK_TIMEOUT_S."""
    timeout = min(settings.timeout_s, CHECK_TIMEOUT_S)
    return settings.model_copy(
        update={"max_retries": 0, "timeout_s": timeout, "retry_budget_s": timeout}
    )


def check_key(name: str | None, where: str) -> None:
    if name and not os.environ.get(name):
        raise LabError(
            f"environment variable {name} is not set",
            where=where,
            fix=f"export {name}=<your key> before running (the design names the variable only)",
        )


def probes_chatbot(bot: ServedChatbotSpec) -> bool:
    """Whether a check calls this chatbot: asked to (probe = true), or served by the
    researcher's own vLLM (litellm's hosted_vllm/ provider: a call that costs nothing)."""
    return bot.probe or bot.model.startswith(SELF_HOSTED)


def probe_chatbot(bot: ServedChatbotSpec, where: str) -> None:
    """One short reply: the key, the model name and the address are right, and the reply
    shows thinking only where the design says what to do with it."""
    from diarylab.chatbots.served import ServedChatbot

    client = ServedClient(bot.model, check_endpoint(bot.endpoint))
    chatbot = ServedChatbot(bot.id, client, CHATBOT_PROBE, thinking=bot.thinking)
    try:
        [reply] = chatbot.reply_many([[{"role": "user", "content": PING.messages[0][1]}]], [0])
    except LabError as exc:
        raise at_check(exc, where, f"chatbot {bot.id!r} failed its probe") from None
    if "thinking" not in reply.record:
        return
    if bot.thinking == "none":
        raise LabError(
            f"chatbot {bot.id!r} thinks (its probe's reply holds thinking: a <think> block or "
            "a reasoning field) and its design does not say what to do with it",
            where=f"{where}.thinking",
            fix='set thinking = "off" to ask its chat template not to think (Qwen3), or '
            'thinking = "apart" to let it think; the diarist reads the answer alone either way',
        )
    if bot.thinking == "off":
        raise LabError(
            f'chatbot {bot.id!r} still thinks with thinking = "off": its server did not pass '
            "enable_thinking = false to the chat template, or the template has no such switch",
            where=f"{where}.thinking",
            fix='set thinking = "apart" (and raise generation.max_new_tokens: the thinking '
            "counts against it), or serve a chat template that honours enable_thinking",
        )


def at_check(exc: LabError, where: str, what: str) -> LabError:
    """A served failure said as a check says it: what the server answered, and one fix for
    the check (a run's "re-running resumes" means nothing before a run)."""
    said = str(exc).split(" — fix: ")[0]
    name = type(exc.__cause__).__name__ if exc.__cause__ else ""
    if any(word in said for word in ("AuthenticationError", "PermissionDenied", "is not set")):
        fix = "check the key in the variable endpoint.api_key_env names (it was refused)"
    elif "NotFoundError" in said or name == "NotFoundError":
        fix = "check the model name (as the provider spells it) and endpoint.base_url"
    elif "refused the request" in said:
        fix = "check the model name, endpoint.base_url and the key variable"
    else:
        fix = (
            "start the server, or fix endpoint.base_url; `design check --offline` checks the "
            "files alone"
        )
    return LabError(f"{what}: {said}", where=where, fix=fix)
