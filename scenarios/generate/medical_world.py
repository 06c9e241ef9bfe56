"""The medical HR scenario DB: staff, credentialed providers, shifts and appointment slots.

Shapes follow what the medical_hr engine reads (spec 2.7): employees and providers
keyed by employee ID and NPI, shifts keyed ``SHF-YYYYMMDD-HHMM``, appointment slots as
``appointment_availability[type][department][date] = [HH:MM, ...]``.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from scenarios.generate.people import NameBook, Person

UNITS = {
    "3W-CARD": ("CARDIOLOGY", "the cardiac step-down unit", ["ACLS", "BLS"]),
    "1E-ED": ("EMERGENCY", "the emergency department", ["ACLS", "BLS", "TNCC"]),
    "5N-ONC": ("ONCOLOGY", "the oncology unit", ["BLS", "ONC-CERT"]),
    "2S-SURG": ("SURGERY", "the surgical unit", ["ACLS", "BLS"]),
    "4E-PEDS": ("PEDIATRICS", "the pediatric unit", ["BLS", "PALS"]),
    "6W-NEURO": ("NEUROLOGY", "the neuroscience unit", ["BLS", "NIHSS"]),
}
FACILITIES = ("MRH-04B", "LKS-12C", "BVMC-07A", "SJH-21D")
STATES = ("MA", "OH", "MN", "OR", "NC", "AZ")
CARRIERS = {
    "proassurance": "ProAssurance",
    "coverys": "Coverys",
    "the_doctors_company": "The Doctors Company",
    "cna": "CNA",
    "zurich": "Zurich",
    "mag_mutual": "MagMutual",
}
CERT_WORDS = {"ONC-CERT": "oncology certification", "NIHSS": "stroke scale certification"}


def shift_id(day: date, start: str) -> str:
    return f"SHF-{day.strftime('%Y%m%d')}-{start.replace(':', '')}"


class MedicalWorld:
    """Builds one medical HR DB; every random draw comes from ``rng``."""

    def __init__(self, rng: random.Random, today: date) -> None:
        self.rng = rng
        self.today = today
        self.names = NameBook(rng)
        self.ids: set[str] = set()
        self.unit = rng.choice(sorted(UNITS))
        self.department = UNITS[self.unit][0]
        departments = sorted({d for d, _, _ in UNITS.values()})
        self.db: dict[str, Any] = {
            "_current_date": today.isoformat(),
            "unit_cert_requirements": {u: list(certs) for u, (_, _, certs) in UNITS.items()},
            "providers": {},
            "employees": {},
            "shifts": {},
            "notifications": [],
            "session": {},
            "appointment_availability": {
                kind: {}
                for kind in ("orientation_followup", "return_to_work_checkin", "competency_review")
            },  # fmt: skip
            "org_holidays": self.holidays(),
            "department_blackout_dates": {d: [] for d in departments},
        }

    def holidays(self) -> list[str]:
        year = self.today.year
        fixed = [date(year, 1, 1), date(year, 7, 3), date(year, 11, 26), date(year, 12, 25)]
        return [d.isoformat() for d in fixed]

    def digits(self, count: int) -> str:
        return "".join(str(self.rng.randint(0, 9)) for _ in range(count))

    def employee_id(self) -> str:
        while True:
            candidate = f"EMP{self.rng.randint(1, 9)}{self.digits(5)}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def employee(
        self, person: Person, role: str = "RN", unit: str | None = None, hired_days: int = 900
    ) -> dict[str, Any]:
        home = unit or self.unit
        emp_id = self.employee_id()
        hired = self.today - timedelta(days=hired_days)
        born = date(self.rng.randint(1965, 2000), self.rng.randint(1, 12), self.rng.randint(1, 28))
        record: dict[str, Any] = {
            "employee_id": emp_id,
            "first_name": person.first,
            "last_name": person.last,
            "date_of_birth": born.isoformat(),
            "phone_last_four": self.digits(4),
            "otp_code": self.digits(6),
            "department_code": UNITS[home][0],
            "role_code": role,
            "unit_code": home,
            "hire_date": hired.isoformat(),
            "employment_status": "active",
            "schedule_type": "standard",
            "certifications": list(UNITS[home][2]),
            "fmla_eligibility": {
                "eligible": hired_days > 365,
                "months_employed": hired_days // 30,
                "hours_worked_past_year": 1800 if hired_days > 365 else hired_days * 4,
                "fmla_weeks_remaining": 12,
                "reason": None,
            },
            "onboarding_checklist": {"tasks": {}},
            "oncall_schedule": {"registrations": []},
            "scheduled_appointments": [],
            "leave_records": [],
            "pto_balances": {"pto": float(self.rng.randint(8, 22)), "sick": 5.0},
            "pto_requests": [],
        }
        self.db["employees"][emp_id] = record
        return record

    def npi(self) -> str:
        while True:
            candidate = f"{self.rng.randint(1, 9)}{self.digits(9)}"
            if candidate not in self.db["providers"]:
                return candidate

    def provider(self, person: Person, role: str = "MD") -> dict[str, Any]:
        staff = self.employee(person, role)
        npi = self.npi()
        state = self.rng.choice(STATES)
        license_number = f"{state}-{role}-{self.digits(self.rng.choice((6, 7, 8)))}"
        record: dict[str, Any] = {
            "npi": npi,
            "employee_id": staff["employee_id"],
            "first_name": person.first,
            "last_name": person.last,
            "facility_code": self.rng.choice(FACILITIES),
            "pin": self.digits(4),
            "phone_last_four": staff["phone_last_four"],
            "otp_code": staff["otp_code"],
            "role_code": role,
            "department_code": self.department,
            "hire_date": staff["hire_date"],
            "ehr_access_status": "active",
            "ehr_access_case_id": None,
            "clearance_code": None,
            "licenses": {
                license_number: {
                    "state_license_number": license_number,
                    "license_type": role,
                    "state_code": state,
                    "expiration_date": (self.today + timedelta(days=400)).isoformat(),
                    "status": "active",
                    "investigation_hold": False,
                    "extension_status": None,
                    "extension_type": None,
                    "extension_days": None,
                    "supervising_physician_npi": None,
                    "extension_case_id": None,
                }
            },
            "malpractice": self.malpractice(),
            "scheduled_appointments": [],
        }
        self.db["providers"][npi] = record
        return record

    def malpractice(self) -> dict[str, Any]:
        start = date(self.today.year, 1, 1)
        return {
            "carrier": self.rng.choice(sorted(CARRIERS)),
            "policy_number": f"POL-{start.year}-{self.code(6)}",
            "per_occurrence_limit_usd": 1_000_000,
            "aggregate_limit_usd": 3_000_000,
            "effective_date": start.isoformat(),
            "expiration_date": date(start.year, 12, 31).isoformat(),
            "recredential_required": False,
            "update_case_id": None,
        }

    def code(self, length: int) -> str:
        return "".join(self.rng.choice("ACDEFHJKLMNPRTVWXY2345679") for _ in range(length))

    def shift(
        self, owner: dict[str, Any], day: date, start: str = "07:00", **changes: Any
    ) -> dict[str, Any]:
        sid = shift_id(day, start)
        end = f"{(int(start[:2]) + 12) % 24:02d}:{start[3:]}"
        period_end = day + timedelta(days=(5 - day.weekday()) % 7 + 7)
        record = {
            "shift_id": sid,
            "employee_id": owner["employee_id"],
            "unit_code": owner["unit_code"],
            "date": day.isoformat(),
            "start_time": start,
            "end_time": end,
            "hours_scheduled": 12.0,
            "hours_logged": None,
            "on_call": False,
            "on_call_tier": None,
            "status": "scheduled",
            "swap_locked": False,
            "pay_period_closed": False,
            "corrected_hours": None,
            "correction_type": None,
            "correction_case_id": None,
            "correction_status": None,
            "pay_period_end_date": period_end.isoformat(),
            "swapped_to_employee_id": None,
            "swap_confirmation_id": None,
        }
        record.update(changes)
        self.db["shifts"][sid] = record
        return record

    def slots(self, kind: str, first: date, days: int, skip: set[str]) -> None:
        """Appointment openings on weekdays from ``first``, except the dates in ``skip``."""
        by_date: dict[str, list[str]] = {}
        day = first
        while len(by_date) < days:
            if day.weekday() < 5 and day.isoformat() not in skip:
                times = sorted(self.rng.sample(("08:30", "09:00", "10:00", "11:00", "13:30",
                                                "14:00", "15:30"), 3))  # fmt: skip
                by_date[day.isoformat()] = times
            day += timedelta(days=1)
        self.db["appointment_availability"][kind][self.department] = by_date


def draw_today(rng: random.Random) -> date:
    day = date(2026, 1, 19) + timedelta(days=rng.randint(0, 290))
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day
