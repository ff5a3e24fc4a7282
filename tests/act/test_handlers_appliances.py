"""Fan, thermostat, vacuum and lawn mower handlers, table style."""

from __future__ import annotations

import pytest

from intent_table import check_row

FAN = [
    ("set the ceiling fan speed to 50 percent", 50),
    ("set ceiling fan to 30%", 30),
    ("turn the ceiling fan speed to 100 percent", 100),
    ("set the fan speed in the office to 20 percent", 20),
    ("ceiling fan speed 70", 70),
]


@pytest.mark.parametrize("text, percentage", FAN)
def test_fan_set_speed(text, percentage):
    home = check_row(
        text,
        "HassFanSetSpeed",
        {"percentage": percentage},
        "Speed set",
        ("Ceiling Fan", "set_percentage"),
    )
    assert (home.state("Ceiling Fan"), home.attributes("Ceiling Fan")["percentage"]) == (
        "on",
        percentage,
    )


CLIMATE = [
    ("set the temperature to 22 degrees", 22),
    ("set the ecobee to 19", 19),
    ("change the temperature to 23", 23),
    ("set the temperature to 20.5 degrees", 20.5),
    ("set the ecobee temperature to 18 degrees", 18),
]


@pytest.mark.parametrize("text, temperature", CLIMATE)
def test_climate_set_temperature(text, temperature):
    unit = "degree" if temperature == 1 else "degrees"
    home = check_row(
        text,
        "HassClimateSetTemperature",
        {"temperature": temperature},
        f"Temperature set to {temperature} {unit}",
        ("EcoBee", "set_temperature"),
    )
    assert home.attributes("EcoBee")["temperature"] == temperature
    assert home.attributes("EcoBee")["current_temperature"] == 21.5  # a target, not a reading


VACUUM = [
    ("start rover", "HassVacuumStart", "Started", "start", "cleaning"),
    ("start the vacuum cleaner", "HassVacuumStart", "Started", "start", "cleaning"),
    ("start vacuuming", "HassVacuumStart", "Started", "start", "cleaning"),
    ("vacuum", "HassVacuumStart", "Started", "start", "cleaning"),
    ("start cleaning with rover", "HassVacuumStart", "Started", "start", "cleaning"),
    ("rover return to base", "HassVacuumReturnToBase", "Returning", "return_to_base", "returning"),
    ("return rover to base", "HassVacuumReturnToBase", "Returning", "return_to_base", "returning"),
    (
        "send the vacuum back to base",
        "HassVacuumReturnToBase",
        "Returning",
        "return_to_base",
        "returning",
    ),
    (
        "return the vacuum to the dock",
        "HassVacuumReturnToBase",
        "Returning",
        "return_to_base",
        "returning",
    ),
    ("send rover home", "HassVacuumReturnToBase", "Returning", "return_to_base", "returning"),
]


@pytest.mark.parametrize("text, intent, response, service, state", VACUUM)
def test_vacuum_start_and_return(text, intent, response, service, state):
    home = check_row(text, intent, {}, response, ("Rover", service))
    assert home.state("Rover") == state


@pytest.mark.parametrize(
    "text, area",
    [
        ("vacuum the kitchen", "Kitchen"),
        ("clean the kitchen", "Kitchen"),
        ("vacuum the office", "Office"),
        ("clean the office", "Office"),
        ("vacuum in the kitchen", "Kitchen"),
    ],
)
def test_vacuum_clean_area(text, area):
    home = check_row(
        text, "HassVacuumCleanArea", {"area": area}, f"Cleaning {area}", ("Rover", "clean_area")
    )
    assert home.attributes("Rover")["cleaning_area"] == area


MOWER = [
    ("start mowing", "HassLawnMowerStartMowing", "Started", "start_mowing", "mowing"),
    ("mow the lawn", "HassLawnMowerStartMowing", "Started", "start_mowing", "mowing"),
    ("start mowbie", "HassLawnMowerStartMowing", "Started", "start_mowing", "mowing"),
    ("start the lawn mower", "HassLawnMowerStartMowing", "Started", "start_mowing", "mowing"),
    ("mow the grass", "HassLawnMowerStartMowing", "Started", "start_mowing", "mowing"),
    ("dock the lawn mower", "HassLawnMowerDock", "Docking", "dock", "docked"),
    ("stop mowing", "HassLawnMowerDock", "Docking", "dock", "docked"),
    ("send mowbie home", "HassLawnMowerDock", "Docking", "dock", "docked"),
    ("return mowbie to base", "HassLawnMowerDock", "Docking", "dock", "docked"),
    ("dock mowbie", "HassLawnMowerDock", "Docking", "dock", "docked"),
]


@pytest.mark.parametrize("text, intent, response, service, state", MOWER)
def test_lawn_mower(text, intent, response, service, state):
    home = check_row(
        text,
        intent,
        {},
        response,
        ("Mowbie", service),
        states={"Mowbie": "mowing" if state == "docked" else "docked"},
    )
    assert home.state("Mowbie") == state


@pytest.mark.parametrize(
    "text, mode",
    [
        ("set the ecobee fan mode to auto", "auto"),
        ("set the fan mode to low", "low"),
        ("set fan mode to on", "on"),
        ("put the ecobee fan on auto", "auto"),
        ("set the ecobee fan to high", "high"),
    ],
)
def test_climate_set_fan_mode(text, mode):
    home = check_row(
        text,
        "HassClimateSetFanMode",
        {"fan_mode": mode},
        f"Fan mode set to {mode}",
        ("EcoBee", "set_fan_mode"),
    )
    assert home.attributes("EcoBee")["fan_mode"] == mode
