// A point-sprite vertex shader writing the point size through [[vk::builtin("PointSize")]].
cbuffer Camera : register(b0)
{
    float4x4 viewProj;
    float4 sizeParams;
};

struct VSOutput
{
    float4 position : SV_Position;
    [[vk::builtin("PointSize")]] float pointSize : PSIZE;
    float4 color : COLOR0;
};

VSOutput main(float3 position : POSITION, float4 color : COLOR0)
{
    VSOutput o;
    o.position = mul(viewProj, float4(position, 1.0));
    o.pointSize = sizeParams.x / max(o.position.w, 0.001);
    o.color = color;
    return o;
}
