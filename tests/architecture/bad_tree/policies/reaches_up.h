// A policies/ header that includes platform/: the layering check must reject it.
#pragma once
#include "platform/posix/spawn.h"
