"""The ITSM scenario DB: employees, assets, buildings, desks, parking, rooms, dispatch slots.

Shapes follow what the ITSM engine reads (spec 2.6). Buildings and parking zones carry
our own names; callers may name them and the engine matches names exactly (after
normalisation), so no alias files are needed.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from scenarios.generate.people import NameBook, Person

DEPARTMENTS = {
    "ENG": ("Engineering", ("SWE", "SRE", "QAE")),
    "FIN": ("Finance", ("ANL", "ACC")),
    "MKT": ("Marketing", ("CMS", "DSN")),
    "OPS": ("Operations", ("OPA", "LOG")),
    "SLS": ("Sales", ("AEX", "SDR")),
}
BUILDINGS = {
    "BLD2": "Harborview Campus",
    "BLD4": "Northgate Tower",
    "BLD5": "Cedar Point Annex",
    "BLD7": "Riverside Commons",
}
ZONES = {"PZB": "Birch Street Garage", "PZM": "Mill Pond Lot", "PZT": "Tower Deck"}
SYSTEMS = ("active_directory", "sso_identity", "email_exchange", "vpn_gateway", "erp_oracle")
SYSTEM_WORDS = {
    "active_directory": "Active Directory",
    "sso_identity": "single sign-on",
    "email_exchange": "email",
    "vpn_gateway": "VPN",
    "erp_oracle": "Oracle ERP",
}
LAPTOPS = (("Lenovo", "ThinkPad T14", "windows"), ("Dell", "Latitude 7450", "windows"),
           ("Apple", "MacBook Pro", "macos"), ("HP", "EliteBook 840", "windows"))  # fmt: skip
MONITORS = (("Dell", "U2724D"), ("LG", "27UP850"), ("Samsung", "ViewFinity S8"))
TECHNICIANS = ("Marguerite Olsen", "Dario Finch", "Aylin Demir", "Colm Brady")
GUIDES = {
    "login_issue": [
        "Make sure the username is typed in full, including the domain prefix.",
        "Check that Caps Lock and Num Lock are off, then retype the password.",
        "Try signing in through the self-service password portal.",
        "Confirm the multi-factor prompt reaches the phone and is approved in time.",
    ],
    "network_connectivity": [
        "Check whether the device shows a Wi-Fi or cable connection.",
        "Turn the network adapter off and on again.",
        "Disconnect and reconnect the VPN client.",
        "Open one internal and one public website to see which fails.",
        "Restart the device if nothing else helped.",
    ],
    "hardware_malfunction": [
        "Look for visible damage or loose parts.",
        "Switch the device off, wait ten seconds, and switch it back on.",
        "Unplug and firmly reseat every cable.",
        "Try a different cable, port or power outlet.",
    ],
}


def floor_code(n: int) -> str:
    return f"FL{n}"


class ItsmWorld:
    """Builds one ITSM DB; every random draw comes from ``rng``."""

    def __init__(self, rng: random.Random, today: date) -> None:
        self.rng = rng
        self.today = today
        self.names = NameBook(rng)
        self.ids: set[str] = set()
        self.tags: set[str] = set()
        self.building = rng.choice(sorted(BUILDINGS))
        self.floor = rng.randint(2, 6)
        self.db: dict[str, Any] = {
            "_current_date": today.isoformat(),
            "access_groups": {},
            "active_outages": {},
            "asset_recoveries": {},
            "assets": {},
            "calendar_events": {},
            "cases": {},
            "cost_centers": {},
            "employees": {},
            "facilities": {
                "buildings": {
                    code: {"building_code": code, "name": name} for code, name in BUILDINGS.items()
                },
                "zones": {code: {"zone_code": code, "name": name} for code, name in ZONES.items()},
                "desks": {},
                "parking": {},
                "conference_rooms": {},
            },
            "field_dispatch_availability": {},
            "interactions": {},
            "known_errors": {},
            "permission_templates": {},
            "requests": {},
            "security_cases": {},
            "session": {},
            "software_catalog": {"applications": {}, "licenses": {}},
            "tickets": {},
            "troubleshooting_guides": {k: {"steps": list(v)} for k, v in GUIDES.items()},
            "waitlists": {},
        }

    # ------------------------------------------------------------------ people

    def employee_id(self) -> str:
        while True:
            candidate = f"EMP{self.rng.randint(10, 99):02d}{self.rng.randint(0, 9999):04d}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def digits(self, count: int) -> str:
        return "".join(str(self.rng.randint(0, 9)) for _ in range(count))

    def employee(
        self, person: Person, department: str | None = None, manager: str | None = None
    ) -> dict[str, Any]:
        dept = department or self.rng.choice(sorted(DEPARTMENTS))
        emp_id = self.employee_id()
        cost_center = self.cost_center(dept)
        hired = self.today - timedelta(days=self.rng.randint(400, 4000))
        record: dict[str, Any] = {
            "employee_id": emp_id,
            "first_name": person.first,
            "last_name": person.last,
            "email": f"{person.first.lower()}.{person.last.lower()}@company.com",
            "phone_last_four": self.digits(4),
            "otp_code": self.digits(6),
            "date_of_birth": (hired - timedelta(days=365 * self.rng.randint(22, 40))).isoformat(),
            "department_code": dept,
            "role_code": self.rng.choice(DEPARTMENTS[dept][1]),
            "hire_date": hired.isoformat(),
            "employment_status": "active",
            "building_code": self.building,
            "floor_code": floor_code(self.floor),
            "manager_employee_id": manager,
            "is_manager": False,
            "direct_reports": [],
            "cost_center_code": cost_center,
            "assigned_desk": None,
            "last_desk_assignment_date": None,
            "assigned_parking": None,
            "last_parking_assignment_date": None,
            "account_status": {
                system: {"locked": False, "lock_reason": None, "requires_in_person_reset": False}
                for system in SYSTEMS
            },
            "hardware_entitlements": {},
            "ergonomic_assessment": {"status": "not_started", "completed_date": None},
            "group_memberships": [],
            "system_accounts": [],
        }
        self.db["employees"][emp_id] = record
        return record

    def team(self, caller: Person) -> tuple[dict[str, Any], dict[str, Any]]:
        """The caller's record and their manager's, plus two colleagues."""
        dept = self.rng.choice(sorted(DEPARTMENTS))
        manager = self.employee(self.names.person(), dept)
        manager.update(is_manager=True, manager_auth_code=self.code6())
        record = self.employee(caller, dept, manager["employee_id"])
        manager["direct_reports"].append(record["employee_id"])
        for _ in range(2):
            colleague = self.employee(self.names.person(), dept, manager["employee_id"])
            manager["direct_reports"].append(colleague["employee_id"])
        return record, manager

    def code6(self) -> str:
        return "".join(self.rng.choice("ACDEFGHJKLMNPQRTUVWXY2345679") for _ in range(6))

    def cost_center(self, dept: str) -> str:
        code = f"CC-{list(DEPARTMENTS).index(dept) + 41}{self.rng.randint(10, 99)}"
        self.db["cost_centers"].setdefault(
            code,
            {
                "cost_center_code": code,
                "department_code": dept,
                "description": f"{DEPARTMENTS[dept][0]} operating budget",
                "has_budget": True,
                "remaining_budget_usd": self.rng.randrange(20_000, 150_000, 500),
            },
        )
        return code

    # ------------------------------------------------------------------ assets

    def asset_tag(self, kind: str) -> str:
        while True:
            tag = f"AST-{kind}-{self.rng.randint(100000, 999999)}"
            if tag not in self.tags:
                self.tags.add(tag)
                return tag

    def laptop(self, owner: dict[str, Any], age_months: int) -> dict[str, Any]:
        maker, model, os_name = self.rng.choice(LAPTOPS)
        bought = self.today - timedelta(days=int(age_months * 30.5) + self.rng.randint(3, 20))
        tag = self.asset_tag("LPT")
        asset = {
            "asset_tag": tag,
            "asset_type": "laptop",
            "assigned_employee_id": owner["employee_id"],
            "lifecycle_status": "current",
            "manufacturer": maker,
            "model": model,
            "os": os_name,
            "purchase_date": bought.isoformat(),
            "serial_number": f"{maker[:2].upper()}{self.digits(8)}",
            "size": self.rng.choice(("13-inch", "14-inch", "16-inch")),
            "status": "active",
            "warranty_expiration": bought.replace(year=bought.year + 3).isoformat(),
        }
        self.db["assets"][tag] = asset
        owner["hardware_entitlements"]["laptop_replacement"] = {
            "current_asset_tag": tag, "pending_request": False, "pending_request_id": None,
        }  # fmt: skip
        return asset

    def monitor(self, owner: dict[str, Any]) -> dict[str, Any]:
        maker, model = self.rng.choice(MONITORS)
        bought = self.today - timedelta(days=self.rng.randint(200, 1200))
        tag = self.asset_tag("MON")
        asset = {
            "asset_tag": tag,
            "asset_type": "monitor",
            "assigned_employee_id": owner["employee_id"],
            "lifecycle_status": "current",
            "manufacturer": maker,
            "model": model,
            "os": None,
            "purchase_date": bought.isoformat(),
            "serial_number": f"{maker[:2].upper()}{self.digits(8)}",
            "size": "27-inch",
            "status": "active",
            "warranty_expiration": bought.replace(year=bought.year + 3).isoformat(),
        }
        self.db["assets"][tag] = asset
        return asset

    # ------------------------------------------------------------------ facilities

    def desks(self, free: int, taken_by: list[str]) -> list[str]:
        """Desks on the caller's floor: ``free`` available, one assigned per id in ``taken_by``."""
        facilities = self.db["facilities"]
        numbers = self.rng.sample(range(1, 60), free + len(taken_by))
        codes = []
        for i, n in enumerate(numbers):
            code = f"{self.building}-{floor_code(self.floor)}-D{self.floor}{n:02d}"
            owner = taken_by[i - free] if i >= free else None
            facilities["desks"][code] = {
                "assigned_employee_id": owner,
                "building_code": self.building,
                "floor_code": floor_code(self.floor),
                "near_window": i == 0 or self.rng.random() < 0.3,
                "status": "assigned" if owner else "available",
                "zone": f"{self.rng.choice('ABC')}-{self.floor}",
            }
            codes.append(code)
        return codes[:free]

    def parking(self, free: int) -> list[str]:
        facilities = self.db["facilities"]
        zones = sorted(ZONES)
        codes = []
        for _ in range(free):
            zone = self.rng.choice(zones)
            code = f"{zone}-{self.rng.randint(100, 399)}"
            facilities["parking"][code] = {
                "assigned_employee_id": None,
                "covered": zone != "PZM",
                "level": f"L{self.rng.randint(1, 4)}" if zone != "PZM" else "surface",
                "status": "available",
                "zone_code": zone,
            }
            codes.append(code)
        return sorted(codes)

    def room(
        self, floor: int, capacity: int, equipment: list[str], bookings: list[dict[str, Any]]
    ) -> str:
        rooms = self.db["facilities"]["conference_rooms"]
        code = ""
        while not code or code in rooms:
            code = f"{self.building}-{floor_code(floor)}-RM{floor}{self.rng.randint(10, 49)}"
        rooms[code] = {
            "bookings": bookings,
            "building_code": self.building,
            "capacity": capacity,
            "equipment": equipment,
            "floor_code": floor_code(floor),
        }
        return code

    def dispatch_days(self, first: date, days: int, taken: set[tuple[str, str]]) -> None:
        calendar = self.db["field_dispatch_availability"]
        for offset in range(days):
            day = (first + timedelta(days=offset)).isoformat()
            calendar[day] = {
                window: {
                    "available": (day, window) not in taken,
                    "technician_id": f"T-{self.rng.randint(100, 199)}",
                    "technician_name": self.rng.choice(TECHNICIANS),
                }
                for window in ("morning", "afternoon")
            }


def draw_today(rng: random.Random) -> date:
    """A weekday in 2026."""
    day = date(2026, 1, 12) + timedelta(days=rng.randint(0, 300))
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day


def next_workday(day: date, skip: int = 1) -> date:
    for _ in range(skip):
        day += timedelta(days=1)
        while day.weekday() >= 5:
            day += timedelta(days=1)
    return day
