"""The price sheet (sql/clickhouse/price-sheet.yaml): unit prices and named instance types."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from .store import SQL_DIR

DEFAULT = SQL_DIR / "price-sheet.yaml"


@dataclass(frozen=True)
class InstanceType:
    name: str
    vcpus: float
    memory_gb: float
    usd_hour: float


@dataclass(frozen=True)
class PriceSheet:
    vcpu_hour: float
    gb_hour: float
    instance_types: dict[str, InstanceType]

    def hourly(self, vcpus: float, memory_gb: float, instance_type: str = "") -> float:
        """What a run given these resources costs per hour."""
        if instance_type:
            if instance_type not in self.instance_types:
                raise ValueError(f"unknown instance type {instance_type!r}; the price sheet has "
                                 f"{sorted(self.instance_types)}")
            return self.instance_types[instance_type].usd_hour
        return vcpus * self.vcpu_hour + memory_gb * self.gb_hour


def load(path: Path = DEFAULT) -> PriceSheet:
    doc = yaml.safe_load(path.read_text()) or {}
    try:
        units = doc["unit_prices"]
        sheet = PriceSheet(vcpu_hour=_positive(units["vcpu_hour"], "vcpu_hour"),
                           gb_hour=_positive(units["gb_hour"], "gb_hour"),
                           instance_types={name: InstanceType(name, _positive(t["vcpus"], f"{name}.vcpus"),
                                                              _positive(t["memory_gb"], f"{name}.memory_gb"),
                                                              _positive(t["usd_hour"], f"{name}.usd_hour"))
                                           for name, t in (doc.get("instance_types") or {}).items()})
    except KeyError as missing:
        raise ValueError(f"{path}: missing {missing}") from None
    return sheet


def _positive(value, what: str) -> float:
    number = float(value)
    if number <= 0:
        raise ValueError(f"price sheet: {what} must be positive, got {value}")
    return number


def store(client, sheet: PriceSheet) -> None:
    client.command("TRUNCATE TABLE unit_prices")
    client.command("TRUNCATE TABLE instance_types")
    client.insert("unit_prices", [["vcpu_hour", sheet.vcpu_hour], ["gb_hour", sheet.gb_hour]],
                  column_names=["resource", "usd"])
    if sheet.instance_types:
        client.insert("instance_types", [[t.name, t.vcpus, t.memory_gb, t.usd_hour] for t in sheet.instance_types.values()],
                      column_names=["name", "vcpus", "memory_gb", "usd_hour"])
