"""Per-room / per-client conversations: confirmations never cross between them (issue 12)."""

from hub.core.conversation import Conversation, Conversations
from tests.fakes import make_hub


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_confirmation_expires_with_the_injected_clock():
    clock = FakeClock()
    conv = Conversation("kitchen", clock=clock, confirm_window_s=20)
    conv.ask_confirmation("unlock")
    clock.now += 19
    assert conv.awaiting_confirmation
    assert conv.take_confirmation() == "unlock"
    assert conv.take_confirmation() is None, "taken once only"
    conv.ask_confirmation("unlock")
    clock.now += 21
    assert not conv.awaiting_confirmation and conv.take_confirmation() is None


def test_conversations_are_kept_by_id_with_their_area():
    convs = Conversations(default_area="Office")
    a = convs.get("satellite-a", area="Kitchen")
    assert convs.get("satellite-a") is a and a.area == "Kitchen"
    assert convs.get("satellite-b").area == "Office"
    assert len(convs) == 2


def test_two_conversations_interleaved_never_confirm_each_other():
    """A pending unlock in one room is not confirmed by a "yes" said in another (issue 12)."""
    hub = make_hub(entry="ask")
    unlock = hub.engines.rules().recognize("unlock the front door")
    assert unlock is not None and unlock.entities == ("Front Door",)
    hub.home.set_state("Front Door", "locked")
    kitchen, office = hub.conversation("kitchen"), hub.conversation("office")
    kitchen.ask_confirmation(unlock)  # "Do you want me to unlock the Front Door?" in the kitchen
    office.ask_confirmation(None)  # and an unrelated question in the office
    hub.turn_text("yes", conversation=office)
    assert hub.home.state("Front Door") == "locked", "the office's yes did not unlock"
    assert kitchen.awaiting_confirmation
    trace = hub.turn_text("yes", conversation=kitchen)
    assert trace["intent"] == "HassTurnOff" and hub.home.state("Front Door") == "unlocked"
