"""The console's terminal line (docs/design.md "Technician console"): what a technician's terminal
sends, byte for byte, and what the console echoes and runs. The same discipline runs against
the real process over a pseudo-terminal in tests/integration/test_console_terminal.py."""

from __future__ import annotations

import io
import threading

from controller.console.transport import (
    PROMPT,
    ConsoleTransport,
    Echo,
    EndOfInput,
    LineEditor,
    Submit,
)
from controller.events import ConsoleLine


def run(data: bytes) -> tuple[bytes, list[str], int]:
    """Feed keystrokes: (everything echoed, lines submitted, ends of input)."""
    editor = LineEditor()
    echoed, lines, ends = b"", [], 0
    for item in editor.feed(data):
        if isinstance(item, Echo):
            echoed += item.data
        elif isinstance(item, Submit):
            lines.append(item.text)
        else:
            assert isinstance(item, EndOfInput)
            ends += 1
    return echoed, lines, ends


def test_typed_characters_are_echoed_and_enter_submits() -> None:
    assert run(b"status\r") == (b"status\r\n", ["status"], 0)


def test_cr_lf_and_crlf_each_end_one_line() -> None:
    assert run(b"a\rb\nc\r\nd\n")[1] == ["a", "b", "c", "d"]


def test_backspace_and_delete_erase_one_character_each() -> None:
    echoed, lines, _ = run(b"statx\x08us\r")
    assert lines == ["status"]
    assert echoed == b"statx\b \bus\r\n"
    assert run(b"statx\x7fus\r")[1] == ["status"]


def test_backspace_on_an_empty_line_does_nothing() -> None:
    assert run(b"\x08\x7fok\r") == (b"ok\r\n", ["ok"], 0)


def test_ctrl_u_clears_the_line_on_screen_too() -> None:
    echoed, lines, _ = run(b"garbage\x15help\r")
    assert lines == ["help"]
    assert echoed == b"garbage" + b"\b" * 7 + b" " * 7 + b"\b" * 7 + b"help\r\n"


def test_ctrl_c_cancels_the_line_and_prompts_again() -> None:
    echoed, lines, _ = run(b"void\x03status\r")
    assert lines == ["status"]
    assert echoed == b"void^C\r\n" + PROMPT.encode() + b"status\r\n"


def test_an_empty_line_only_prompts_again() -> None:
    assert run(b"\r\n  \r") == (b"\r\n> " + b"  \r\n> ", [], 0)


def test_arrow_and_function_keys_are_skipped() -> None:
    # up, left, F1 (SS3), F5 (CSI 1 5 ~): nothing typed, nothing echoed
    assert run(b"st\x1b[A\x1b[Dat\x1bOPus\x1b[15~\r") == (b"status\r\n", ["status"], 0)


def test_other_control_bytes_ring_the_bell_and_are_dropped() -> None:
    echoed, lines, _ = run(b"sta\ttus\x01\r")
    assert lines == ["status"]
    assert echoed == b"sta\x07tus\x07\r\n"
    assert run("caf\u00e9\r".encode())[1] == ["caf"]


def test_a_line_stops_at_200_characters_with_the_bell() -> None:
    echoed, lines, _ = run(b"x" * 205 + b"\r")
    assert lines == ["x" * 200]
    assert echoed == b"x" * 200 + b"\x07" * 5 + b"\r\n"


def test_ctrl_d_on_an_empty_line_is_the_end_of_input() -> None:
    assert run(b"\x04")[2] == 1
    assert run(b"ab\x04\r") == (b"ab\x07\r\n", ["ab"], 0)


class Recorder(ConsoleTransport):
    """A transport whose port is a byte buffer; replies come from ``answer``."""

    name = "test"

    def __init__(self, answer: dict[str, list[str]]) -> None:
        super().__init__(self._on_post, line_editing=True)
        self.out = io.BytesIO()
        self.answer = answer

    def _on_post(self, event: object) -> None:
        if isinstance(event, ConsoleLine):
            threading.Thread(target=event.reply, args=(self.answer[event.text],)).start()

    def _write(self, data: bytes) -> None:
        self.out.write(data)

    def start_prompt_only(self) -> None:
        """What start() shows, without a reader thread (the test feeds the bytes)."""
        self._show_prompt()

    def take_bytes(self, data: bytes) -> bool:
        return self._take(data)


def test_the_reply_ends_with_a_new_prompt() -> None:
    t = Recorder({"status": ["state: betting", "OK"]})
    t.start_prompt_only()
    assert t.take_bytes(b"status\r")
    assert t.out.getvalue() == b"> status\r\nstate: betting\r\nOK\r\n> "


def test_an_unsolicited_line_is_written_over_the_prompt_and_the_typing_shown_again() -> None:
    t = Recorder({})
    t.start_prompt_only()
    t.take_bytes(b"sta")
    t.send_unsolicited(["!DISPLAY 6"])
    # CR to column 0, the alarm padded over "> sta", then the prompt and the typing again
    assert t.out.getvalue() == b"> sta\r!DISPLAY 6\r\n> sta"
    t.take_bytes(b"tus")
    assert t.out.getvalue().endswith(b"> status")


def test_a_short_alarm_covers_a_long_typed_line() -> None:
    t = Recorder({})
    t.start_prompt_only()
    t.take_bytes(b"config show recall_depth")
    t.send_unsolicited(["!X"])
    typed = b"> config show recall_depth"
    assert t.out.getvalue() == typed + b"\r" + b"!X".ljust(len(typed)) + b"\r\n" + typed


def test_a_machine_peer_gets_no_prompt_and_no_echo() -> None:
    class Peer(Recorder):
        def __init__(self) -> None:
            ConsoleTransport.__init__(self, self._on_post, line_editing=False)
            self.out = io.BytesIO()
            self.answer = {"status": ["OK"]}

    t = Peer()
    t.take_bytes(b"status\r\nstat\x08us\r\n")
    assert t.out.getvalue() == b"OK\r\nERR SYNTAX line holds non-printable bytes\r\n"
    t.send_unsolicited(["!DISPLAY 6"])
    assert t.out.getvalue().endswith(b"ERR SYNTAX line holds non-printable bytes\r\n!DISPLAY 6\r\n")


def test_a_pin_is_never_echoed_but_is_submitted_as_typed() -> None:
    # A camera or a bystander sees the terminal: the PIN shows as stars; the line run is the
    # one typed, and erasing a star works as erasing any character.
    assert run(b"login 48151623\r") == (b"login ********\r\n", ["login 48151623"], 0)
    echoed, lines, _ = run(b"passwd supervisor 12345678\r")
    assert echoed == b"passwd " + b"*" * 19 + b"\r\n" and lines == ["passwd supervisor 12345678"]
    # a change names the current PIN and the new one: both hidden, and the space between
    echoed, lines, _ = run(b"passwd 48151623 27182818\r")
    assert echoed == b"passwd " + b"*" * 17 + b"\r\n" and lines == ["passwd 48151623 27182818"]
    echoed, lines, _ = run(b"passwd supervisor 27182818 31415926\r")
    assert echoed == b"passwd " + b"*" * 28 + b"\r\n"
    assert lines == ["passwd supervisor 27182818 31415926"]
    echoed, lines, _ = run(b"  LOGIN 1234\x7f5\r")
    assert echoed == b"  LOGIN ****\b \b*\r\n" and lines == ["  LOGIN 1235"]
    assert run(b"loginx 12\r")[0] == b"loginx 12\r\n"  # another word: echoed as typed
    editor = LineEditor()
    shown = [i.shown for i in editor.feed(b"login 99") if isinstance(i, Echo)]
    assert shown[-1] == "login **"  # what a redraw after a ! line prints
