"""A Wyoming wake word service for ``wyoming-satellite --wake-uri``: it "hears the wake word" at
the first chunk after each ``detect`` that is the mic's tone (RMS > 12000 over the chunk).
Run with the satellite's venv.
    python onset_wake.py tcp://127.0.0.1:PORT
"""

import asyncio
import sys

from wyoming.audio import AudioChunk
from wyoming.info import Describe, Info
from wyoming.server import AsyncEventHandler, AsyncServer
from wyoming.wake import Detect, Detection

INFO = Info()


class Handler(AsyncEventHandler):
    armed = True

    async def handle_event(self, event) -> bool:
        if Describe.is_type(event.type):
            await self.write_event(INFO.event())
        elif Detect.is_type(event.type):
            self.armed = True
        elif AudioChunk.is_type(event.type) and self.armed:
            audio = AudioChunk.from_event(event).audio
            values = [
                int.from_bytes(audio[i : i + 2], "little", signed=True)
                for i in range(0, len(audio) - 1, 2)
            ]
            rms = (sum(v * v for v in values) / max(1, len(values))) ** 0.5
            if rms > 12000:  # the mic's full-chunk tone (speech never stays this loud)
                self.armed = False
                await self.write_event(Detection(name="onset").event())
        return True


async def main() -> None:
    server = AsyncServer.from_uri(sys.argv[1])
    await server.run(Handler)


if __name__ == "__main__":
    asyncio.run(main())
