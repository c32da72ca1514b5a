/*
 * commands.h: the top-level commands, one function each, and the table
 * main.c dispatches on. Adding a command means a line here.
 */
#ifndef PR_COMMANDS_H
#define PR_COMMANDS_H

#include "cli.h"

#define COMMANDS_TABLE

#endif
