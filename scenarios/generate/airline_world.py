"""The airline scenario DB: airports, journeys with seats and fares, reservations.

Shapes follow what the airline engine reads (spec 2.5): journeys keyed
``FL_<flights>_<YYYYMMDD>`` with journey- and segment-level fares and seat counts per
cabin, reservations keyed by confirmation code with passengers and bookings.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from scenarios.generate.people import NameBook, Person

CABINS = ("basic_economy", "main_cabin", "premium_economy", "business", "first")
CABIN_WORDS = {
    "basic_economy": "basic economy",
    "main_cabin": "main cabin",
    "premium_economy": "premium economy",
    "business": "business",
    "first": "first class",
}
FARE_FACTORS = {"basic_economy": 0.8, "main_cabin": 1.0, "premium_economy": 2.2, "business": 3.6}
SEAT_RANGES = {
    "basic_economy": (4, 14),
    "main_cabin": (8, 24),
    "premium_economy": (3, 9),
    "business": (1, 4),
    "first": (0, 0),
}
AIRCRAFT = ("A220-300", "A320", "A321neo", "737-800", "737 MAX 8", "E175")
# Letters that are never confused on the phone (no O/0, I/1, S/5, B/8).
CODE_LETTERS = "ACDEFGHJKLMNPQRTUVWXYZ"
CODE_DIGITS = "2345679"


@dataclass(frozen=True)
class Airport:
    code: str
    city: str
    utc_offset: int
    zone: str


AIRPORTS = {
    a.code: a
    for a in (
        Airport("ATL", "Atlanta", -5, "EST"),
        Airport("BOS", "Boston", -5, "EST"),
        Airport("DEN", "Denver", -7, "MST"),
        Airport("DFW", "Dallas", -6, "CST"),
        Airport("MSP", "Minneapolis", -6, "CST"),
        Airport("PHX", "Phoenix", -7, "MST"),
        Airport("PDX", "Portland", -8, "PST"),
        Airport("SEA", "Seattle", -8, "PST"),
        Airport("SLC", "Salt Lake City", -7, "MST"),
        Airport("RDU", "Raleigh", -5, "EST"),
        Airport("MCI", "Kansas City", -6, "CST"),
        Airport("SAN", "San Diego", -8, "PST"),
    )
}


def clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def minutes_of(hhmm: str) -> int:
    hour, minute = hhmm.split(":")
    return int(hour) * 60 + int(minute)


def journey_key(flights: list[str], day: str) -> str:
    return f"FL_{'_'.join(flights)}_{day.replace('-', '')}"


class AirlineWorld:
    """Builds one airline DB; every random draw comes from ``rng``."""

    def __init__(self, rng: random.Random, today: date) -> None:
        self.rng = rng
        self.today = today
        self.names = NameBook(rng)
        self.now = f"{today.isoformat()} 09:00 EST"
        self.flight_numbers: set[str] = set()
        self.codes: set[str] = set()
        self.db: dict[str, Any] = {
            "_current_date": today.isoformat(),
            "reservations": {},
            "journeys": {},
            "disruptions": {},
            "travel_credits": {},
            "meal_vouchers": {},
            "refunds": {},
        }

    # ------------------------------------------------------------------ ids

    def flight_number(self) -> str:
        while True:
            candidate = f"MR{self.rng.randint(120, 989)}"
            if candidate not in self.flight_numbers:
                self.flight_numbers.add(candidate)
                return candidate

    def confirmation_code(self) -> str:
        while True:
            chars = [self.rng.choice(CODE_LETTERS) for _ in range(4)]
            chars += [self.rng.choice(CODE_DIGITS) for _ in range(2)]
            self.rng.shuffle(chars)
            code = "".join(chars)
            if code not in self.codes:
                self.codes.add(code)
                return code

    def route(self) -> tuple[str, str]:
        origin, destination = self.rng.sample(sorted(AIRPORTS), 2)
        return origin, destination

    def base_fare(self) -> float:
        return float(self.rng.randrange(160, 420, 5))

    # ------------------------------------------------------------------ journeys

    def fares(self, base: float) -> dict[str, float | None]:
        fares: dict[str, float | None] = {c: round(base * f) * 1.0 for c, f in FARE_FACTORS.items()}
        fares["first"] = None
        return fares

    def seats(self, sold_out: tuple[str, ...] = ()) -> dict[str, int]:
        return {
            cabin: 0 if cabin in sold_out else self.rng.randint(*SEAT_RANGES[cabin])
            for cabin in CABINS
        }

    def segment(
        self, origin: str, destination: str, departure: str, fares: dict[str, Any],
        sold_out: tuple[str, ...], seat_types: dict[str, list[str]],
    ) -> dict[str, Any]:  # fmt: skip
        """The one leg of a nonstop journey, with seats, fares and seat types per cabin."""
        src, dst = AIRPORTS[origin], AIRPORTS[destination]
        shift = 60 * (dst.utc_offset - src.utc_offset)
        # Arrivals stay on the same local day, which keeps spoken times unambiguous.
        longest = min(285, 23 * 60 + 30 - minutes_of(departure) - shift)
        duration = self.rng.randrange(95, max(100, longest), 5)
        arrival = minutes_of(departure) + duration + shift
        return {
            "segment_number": 1,
            "flight_number": self.flight_number(),
            "origin": origin,
            "destination": destination,
            "scheduled_departure": departure,
            "origin_utc_offset": src.utc_offset,
            "scheduled_arrival": clock(arrival % (24 * 60)),
            "destination_utc_offset": dst.utc_offset,
            "duration_minutes": duration,
            "aircraft_type": self.rng.choice(AIRCRAFT),
            "status": "scheduled",
            "delay_minutes": None,
            "delay_reason": None,
            "cancellation_reason": None,
            "gate": f"{self.rng.choice('ABCDE')}{self.rng.randint(1, 38)}",
            "available_seats": self.seats(sold_out),
            "fares": fares,
            "available_seat_types": {
                cabin: list(seat_types.get(cabin, ["window", "aisle", "middle"]))
                for cabin in CABINS
                if cabin != "first"
            }
            | {"first": []},
        }

    def journey(
        self,
        origin: str,
        destination: str,
        day: date,
        departure: str,
        base: float | None = None,
        sold_out: tuple[str, ...] = (),
        seat_types: dict[str, list[str]] | None = None,
    ) -> dict[str, Any]:
        """A nonstop journey, added to the DB and returned."""
        fares = self.fares(base if base is not None else self.base_fare())
        segment = self.segment(origin, destination, departure, fares, sold_out, seat_types or {})
        journey = {
            "journey_id": journey_key([segment["flight_number"]], day.isoformat()),
            "date": day.isoformat(),
            "origin": origin,
            "destination": destination,
            "num_stops": 0,
            "total_duration_minutes": segment["duration_minutes"],
            "segments": [segment],
            "status": "scheduled",
            "bookable": True,
            "fares": dict(fares),
        }
        self.db["journeys"][journey["journey_id"]] = journey
        return journey

    def day_schedule(
        self, origin: str, destination: str, day: date, times: list[str], **kwargs: Any
    ) -> list[dict[str, Any]]:
        return [self.journey(origin, destination, day, t, **kwargs) for t in times]

    # ------------------------------------------------------------------ reservations

    def passenger(self, index: int, person: Person, seat_pref: str) -> dict[str, Any]:
        return {
            "passenger_id": f"PAX{index:03d}",
            "first_name": person.first,
            "last_name": person.last,
            "ticket_number": "".join(self.rng.choice(string.digits) for _ in range(13)),
            "email": f"{person.first.lower()}.{person.last.lower()}@example.com",
            "phone": person.phone,
            "elite_status": None,
            "meal_preference": "none",
            "seat_preference": seat_pref,
        }

    def booking(self, journey: dict[str, Any], cabin: str, seat: str | None) -> dict[str, Any]:
        fare = journey["fares"][cabin]
        segments = [
            {
                "flight_number": seg["flight_number"],
                "date": journey["date"],
                "fare_paid": fare,
                "seat": seat,
                "bags_checked": 0,
                "meal_request": None,
            }
            for seg in journey["segments"]
        ]
        return {
            "journey_id": journey["journey_id"],
            "fare_class": cabin,
            "fare_paid": fare,
            "status": "confirmed",
            "segments": segments,
        }

    def reservation(
        self,
        person: Person,
        journey: dict[str, Any],
        cabin: str,
        fare_type: str = "non_refundable",
        booked_hours_ago: int | None = None,
        seat_pref: str = "window",
        seat: str | None = None,
    ) -> dict[str, Any]:
        code = self.confirmation_code()
        hours_ago = booked_hours_ago or self.rng.randint(24 * 12, 24 * 70)
        booked = datetime.combine(self.today, datetime.min.time()) + timedelta(hours=9)
        booked -= timedelta(hours=hours_ago)
        offset = AIRPORTS[journey["origin"]].utc_offset
        reservation = {
            "confirmation_number": code,
            "status": "confirmed",
            "passengers": [self.passenger(1, person, seat_pref)],
            "bookings": [self.booking(journey, cabin, seat)],
            "booking_date": booked.strftime("%Y-%m-%dT%H:%M:00") + f"{offset:+03d}:00",
            "fare_type": fare_type,
            "ancillaries": {"seat_selection_fee": 0, "bags_fee": 0},
        }
        self.db["reservations"][code] = reservation
        return reservation

    def background(self, count: int = 2) -> None:
        """Other travellers' trips, so lookups and searches are not trivially unique."""
        for _ in range(count):
            origin, destination = self.route()
            day = self.today + timedelta(days=self.rng.randint(2, 40))
            journey = self.journey(
                origin, destination, day, clock(self.rng.randrange(360, 1200, 5))
            )
            self.reservation(self.names.person(), journey, self.rng.choice(CABINS[:3]))

    def disrupt(
        self,
        journey: dict[str, Any],
        cause: str,
        delay_minutes: int | None = None,
        overnight: bool = False,
    ) -> dict[str, Any]:
        """Cancel (no ``delay_minutes``) or delay ``journey`` for an airline-side ``cause``."""
        segment = journey["segments"][0]
        kind = "delay" if delay_minutes else "cancellation"
        if delay_minutes:
            segment.update(status="delayed", delay_minutes=delay_minutes, delay_reason=cause)
            journey["status"] = "delayed"
        else:
            segment.update(
                status="cancelled",
                cancellation_reason=cause,
                available_seats={c: 0 for c in CABINS},
            )
            journey.update(status="cancelled", bookable=False)
        record = {
            "flight_number": segment["flight_number"],
            "date": journey["date"],
            "disruption_type": kind,
            "cause": cause,
            "cause_category": "airline_fault",
            "is_irrops": True,
            "delay_minutes": delay_minutes,
            "passenger_entitled_to": {
                "fee_waiver": True,
                "refund_option": kind == "cancellation",
                "meal_voucher": True,
                "hotel_accommodation": overnight,
                "rebooking_window_days": 7,
            },
        }
        self.db["disruptions"][f"{segment['flight_number']}_{journey['date']}"] = record
        return record

    def set_now(self, airport: str, earliest: int = 8 * 60, latest: int = 17 * 60) -> int:
        """Pick the call's local time at ``airport`` (minutes after midnight) and return it."""
        minutes = self.rng.randrange(earliest, latest, 5)
        self.now = f"{self.today.isoformat()} {clock(minutes)} {AIRPORTS[airport].zone}"
        return minutes


def draw_today(rng: random.Random) -> date:
    return date(2026, 2, 2) + timedelta(days=rng.randint(0, 280))
