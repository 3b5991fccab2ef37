// Shared declarations; includes another file to make the dependency transitive.
#pragma once
#include "math.hlsli"

struct Light
{
    float4 Direction;
    float4 Color;
};

cbuffer Lighting
{
    Light Sun;
    float4 Ambient;
};
