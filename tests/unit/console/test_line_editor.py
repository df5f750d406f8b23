"""The console's terminal line (docs/design.md "Technician console"): what a technician's terminal
sends, byte for byte, and what the console echoes and runs. The same discipline runs against
the real process over a pseudo-terminal in tests/integration/test_console_terminal.py."""

from __future__ import annotations

import io
import threading

from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_function_keys_are_skipped() -> None:
    # F1 (SS3 P), F5 (CSI 1 5 ~), Insert (CSI 2 ~), Page Up (CSI 5 ~): nothing typed or echoed
    assert run(b"st\x1bOPat\x1b[15~us\x1b[2~\x1b[5~\r") == (b"status\r\n", ["status"], 0)


class Screen:
    """One line of a terminal as VT100 draws it: a printable character is written at the
    cursor, which moves right; BS moves it left; CR to column 0; LF starts a new line. What a
    technician sees, worked out from the bytes alone."""

    def __init__(self) -> None:
        self.line: list[str] = []
        self.col = 0
        self.bells = 0
        self.origin = 0  # where the typed text starts: after the prompt

    def prompt(self) -> None:
        self.write(b"\r\n> ")
        self.origin = 2

    def write(self, data: bytes) -> None:
        for byte in data:
            if byte == 0x08:
                self.col = max(0, self.col - 1)
            elif byte == 0x0D:
                self.col = 0
            elif byte == 0x0A:
                self.line, self.col = [], 0
            elif byte == 0x07:
                self.bells += 1
            else:
                assert 0x20 <= byte <= 0x7E, byte
                while len(self.line) <= self.col:
                    self.line.append(" ")
                self.line[self.col] = chr(byte)
                self.col += 1

    @property
    def text(self) -> str:
        return "".join(self.line).rstrip(" ")


LEFT, RIGHT, UP, DOWN = b"\x1b[D", b"\x1b[C", b"\x1b[A", b"\x1b[B"
HOME, END, DELETE = b"\x1b[H", b"\x1b[F", b"\x1b[3~"


def typed(editor: LineEditor, screen: Screen, keys: bytes) -> list[str]:
    """Feed ``keys``: echo goes to ``screen``; the lines submitted."""
    lines = []
    for item in editor.feed(keys):
        if isinstance(item, Echo):
            screen.write(item.data)
            if item.data.endswith(b"\r\n> "):  # an empty line, or ^C: the prompt again
                screen.origin = 2
            if b"\n" not in item.data:
                after = "".join(screen.line)[screen.origin :]
                # the line, then nothing but blanks (what an edit left behind)
                assert after.startswith(item.shown) and not after[len(item.shown) :].strip()
                assert item.cursor == screen.col - screen.origin
        elif isinstance(item, Submit):
            lines.append(item.text)
    return lines


def test_left_and_right_move_the_cursor_and_typing_inserts_there() -> None:
    editor, screen = LineEditor(), Screen()
    assert typed(editor, screen, b"config sow" + LEFT * 2 + b"h") == []
    assert (screen.text, screen.col, editor.cursor) == ("config show", 9, 9)
    typed(editor, screen, RIGHT * 5 + b" recall_depth")  # Right stops at the end
    assert screen.text == editor.text == "config show recall_depth"
    assert typed(editor, screen, b"\r") == ["config show recall_depth"]


def test_home_end_delete_and_backspace_in_the_middle_of_a_line() -> None:
    for home, end in (
        (HOME, END),
        (b"\x1bOH", b"\x1bOF"),
        (b"\x1b[1~", b"\x1b[4~"),
        (b"\x1b[7~", b"\x1b[8~"),
    ):
        editor, screen = LineEditor(), Screen()
        typed(editor, screen, b"xxstatus" + home + DELETE + b"\x1b[C" + b"\x7f" + end + b" ok")
        assert screen.text == editor.text == "status ok"
        assert screen.col == len("status ok")
        # Delete at the end and BS at the start do nothing
        typed(editor, screen, DELETE + home + b"\x08")
        assert (screen.text, screen.col, screen.bells) == ("status ok", 0, 0)
        assert typed(editor, screen, b"\r") == ["status ok"]


def test_an_edit_that_shortens_the_line_blanks_what_it_lost_on_screen() -> None:
    editor, screen = LineEditor(), Screen()
    typed(editor, screen, b"recall 20 json" + HOME + RIGHT * 6 + DELETE * 3)
    assert screen.text == "recall json" and screen.col == 6
    assert "".join(screen.line) == "recall json   "  # the old tail overwritten with spaces


def test_up_and_down_walk_the_history_and_down_brings_the_draft_back() -> None:
    editor, screen = LineEditor(), Screen()
    for line in (b"status", b"help config", b"help config", b"config show recall_depth"):
        typed(editor, screen, line + b"\r")
        screen.prompt()
    assert editor.history == ("status", "help config", "config show recall_depth")  # no repeat
    typed(editor, screen, b"rec")
    typed(editor, screen, UP)
    assert screen.text == "> config show recall_depth" and editor.text == screen.text[2:]
    typed(editor, screen, UP + UP)
    assert screen.text == "> status"
    typed(editor, screen, UP)  # nothing older: the bell, the line stays
    assert (screen.text, screen.bells) == ("> status", 1)
    typed(editor, screen, DOWN)
    assert screen.text == "> help config"
    typed(editor, screen, DOWN + DOWN)
    assert screen.text == "> rec" and editor.cursor == 3  # the draft, as it was
    typed(editor, screen, DOWN)
    assert screen.bells == 2
    # a recalled line is edited like a typed one and run as shown
    typed(editor, screen, UP + UP + LEFT * 6 + b"x" + END + b"\x7f" * 6 + b"show")
    assert screen.text == "> help xshow"
    assert typed(editor, screen, b"\r") == ["help xshow"]
    assert editor.history[-1] == "help xshow"


def test_the_application_cursor_keys_work_too() -> None:
    editor, screen = LineEditor(), Screen()
    typed(editor, screen, b"odds\r")
    screen.prompt()
    typed(editor, screen, b"\x1bOA\x1bOD\x1bODx")  # SS3 A (up), SS3 D (left) twice
    assert screen.text == "> odxds"


def test_the_history_keeps_the_last_lines_only() -> None:
    editor = LineEditor(history=3)
    editor.feed(b"a\rb\rc\rd\r")
    assert editor.history == ("b", "c", "d")


def test_a_line_with_a_pin_is_never_kept_and_stays_hidden_while_edited() -> None:
    editor, screen = LineEditor(), Screen()
    typed(editor, screen, b"status\r")
    screen.prompt()
    assert typed(editor, screen, b"login 48151623\r") == ["login 48151623"]
    screen.prompt()
    assert typed(editor, screen, b"passwd 48151623 27182818\r") == ["passwd 48151623 27182818"]
    assert editor.history == ("status",)
    screen.prompt()
    typed(editor, screen, UP)
    assert screen.text == "> status"
    # a PIN half typed, then its command word edited away: the line stays hidden
    screen.prompt()
    editor = LineEditor()
    typed(editor, screen, b"login 1234" + HOME + DELETE * 6)
    assert editor.text == "1234" and screen.text == "> ****"
    typed(editor, screen, b"\x15")  # Ctrl-U ends it
    typed(editor, screen, b"12")
    assert screen.text == "> 12"
    # Up from a half-typed PIN and Down again: still hidden
    editor, screen = LineEditor(), Screen()
    typed(editor, screen, b"help\r")
    screen.prompt()
    typed(editor, screen, b"login 99" + UP)
    assert screen.text == "> help"
    typed(editor, screen, DOWN)
    assert screen.text == "> login **" and editor.text == "login 99"


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


def test_an_unsolicited_line_puts_the_cursor_back_where_it_was_in_the_line() -> None:
    t = Recorder({"status": ["OK"]})
    t.start_prompt_only()
    t.take_bytes(b"statux\x1b[D\x1b[D")
    before = len(t.out.getvalue())
    t.send_unsolicited(["!DISPLAY 6"])
    assert t.out.getvalue()[before:] == b"\r!DISPLAY 6\r\n> statux\b\b"
    t.take_bytes(b"\x1b[3~us\x1b[F\x7f\r")  # Delete under the cursor, insert, End, BS
    screen = Screen()
    screen.write(t.out.getvalue().split(b"!DISPLAY 6\r\n")[1].split(b"\r\n")[0])
    assert screen.text == "> status"
    assert t.out.getvalue().endswith(b"\r\nOK\r\n> ")


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


KEYS = [LEFT, RIGHT, UP, DOWN, HOME, END, DELETE, b"\x7f", b"\x08", b"\x15", b"a", b"b", b" "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*KEYS, b"\r", b"login ", b"x" * 30]), max_size=60))
def test_whatever_is_typed_the_screen_shows_the_line_and_the_cursor_where_the_editor_has_them(
    keys: list[bytes],
) -> None:
    # typed() checks after every echo that the screen, as a terminal draws the bytes, shows
    # exactly the line (a PIN hidden) with the cursor at the editor's cursor
    editor, screen = LineEditor(max_line=40), Screen()
    for key in keys:
        submitted = typed(editor, screen, key)
        if submitted:
            screen.prompt()
            assert "login " not in editor.history
    assert len(editor.text) <= 40
