//! Files of many time steps and how discovery maps dates to files and steps: the products as
//! they ship, directories, globs and lists, dates in names checked against time axes, reads of
//! one step per pool slot, and flags checked against the input's calendar.

mod discovery;
mod model_calendar_cli;
mod names;
mod products;
mod read;
