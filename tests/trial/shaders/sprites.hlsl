// Instanced sprites: one quad (from SV_VertexID), per-instance data from a StructuredBuffer.
struct Sprite
{
    float2 Center;
    float2 HalfSize;
    float4 Color;
};

StructuredBuffer<Sprite> Sprites : register(t0);

cbuffer View : register(b0)
{
    float2 Scale;   // clip units per pixel
    float2 Offset;
};

struct VSOut
{
    float4 Position : SV_Position;
    nointerpolation float4 Color : COLOR0;
};

[shader("vertex")]
VSOut VSMain(uint vid : SV_VertexID, uint iid : SV_InstanceID)
{
    // two triangles: (0,0) (1,0) (1,1) / (0,0) (1,1) (0,1)
    const uint2 corners[6] = { uint2(0, 0), uint2(1, 0), uint2(1, 1), uint2(0, 0), uint2(1, 1), uint2(0, 1) };
    Sprite s = Sprites[iid];
    float2 c = float2(corners[vid]) * 2.0 - 1.0;
    float2 p = s.Center + c * s.HalfSize;
    VSOut o;
    o.Position = float4(p * Scale + Offset, 0.0, 1.0);
    o.Color = s.Color;
    return o;
}

[shader("pixel")]
float4 PSMain(VSOut i) : SV_Target0
{
    return i.Color;
}
