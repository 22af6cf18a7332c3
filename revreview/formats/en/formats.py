"""Dates as every page of revreview writes them, the admin's included: one format,
ISO-like, in UTC (TIME_ZONE). Django's English locale would write "Nov. 25, 2026, 2:13
a.m." in the admin beside the dashboard's "2026-11-25 02:13"."""

DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i"
TIME_FORMAT = "H:i"
SHORT_DATE_FORMAT = "Y-m-d"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
MONTH_DAY_FORMAT = "m-d"
YEAR_MONTH_FORMAT = "Y-m"
