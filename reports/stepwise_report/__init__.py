"""stepwise_report: tables, plots, a dashboard, CI exports and a regression gate over stepwise result files."""
